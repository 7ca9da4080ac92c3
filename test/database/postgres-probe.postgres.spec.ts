// The probe that decides whether the postgres tier runs: a server that answers but refuses the tests' login
// (a fresh install asks for a password) is reported with the server's reason, not as a server missing.
import { describeNeeding, postgresMissing, TEST_POSTGRES_URL } from '../helpers/system-parts.js';

describeNeeding('postgres', 'the PostgreSQL probe', () => {
  it('finds the server the tests use', () => {
    expect(postgresMissing(TEST_POSTGRES_URL)).toBeUndefined();
  });

  it("names the server's refusal of a login it does not accept", () => {
    const u = new URL(TEST_POSTGRES_URL);
    u.username = 'atrium_no_such_role';
    expect(postgresMissing(u.toString())).toMatch(
      new RegExp(`^PostgreSQL at ${u.host} refused the tests: .*atrium_no_such_role`),
    );
  });

  it('says no server answers where none listens', () => {
    const u = new URL(TEST_POSTGRES_URL);
    u.port = '1';
    expect(postgresMissing(u.toString())).toBe(`no PostgreSQL answer at ${u.host}`);
  });
});

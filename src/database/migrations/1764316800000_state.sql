-- Up Migration
-- The gateway's system of record (docs/operations.md "State"): consumers and their key digests, the audit
-- trail of admin changes, and the usage ledger. Redis keeps only what may be lost.

-- One row: the version of the consumer set, bumped by every change (replicas compare it with theirs).
CREATE TABLE atrium_consumer_state (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version bigint NOT NULL
);
INSERT INTO atrium_consumer_state (singleton, version) VALUES (true, 0);

-- A consumer's settings as the consumers file writes them, without its keys.
CREATE TABLE atrium_consumers (
  id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9._-]{1,64}$'),
  settings jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Key digests only (SHA-256 of the key): one key opens one consumer, never two.
CREATE TABLE atrium_consumer_keys (
  consumer_id text NOT NULL REFERENCES atrium_consumers (id) ON DELETE CASCADE,
  key_id text NOT NULL,
  sha256 bytea NOT NULL UNIQUE CHECK (octet_length(sha256) = 32),
  expires_at timestamptz,
  created_at timestamptz,
  PRIMARY KEY (consumer_id, key_id)
);

-- Who changed what, when (never a key or a digest).
CREATE TABLE atrium_audit (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  actor text NOT NULL,
  ip text,
  action text NOT NULL,
  consumer_id text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  version bigint NOT NULL
);
CREATE INDEX atrium_audit_consumer ON atrium_audit (consumer_id, at);

-- Usage per UTC day, consumer and upstream: the counters of src/usage/usage-counters.ts.
CREATE TABLE atrium_usage (
  day date NOT NULL,
  consumer text NOT NULL,
  upstream text NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  cache_answers bigint NOT NULL DEFAULT 0,
  coalesced bigint NOT NULL DEFAULT 0,
  vendor_calls bigint NOT NULL DEFAULT 0,
  vendor_errors bigint NOT NULL DEFAULT 0,
  quota_rejections bigint NOT NULL DEFAULT 0,
  shield_rejections bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, consumer, upstream)
);

-- Batches already added: a batch resent after a lost acknowledgement is not counted twice.
CREATE TABLE atrium_usage_batches (
  id uuid PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE atrium_usage_batches;
DROP TABLE atrium_usage;
DROP TABLE atrium_audit;
DROP TABLE atrium_consumer_keys;
DROP TABLE atrium_consumers;
DROP TABLE atrium_consumer_state;

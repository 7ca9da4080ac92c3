/** The gateway's pino logger (one per app; main.ts passes the one Nest itself logs through). */
export const ATRIUM_LOGGER = Symbol('AtriumLogger');

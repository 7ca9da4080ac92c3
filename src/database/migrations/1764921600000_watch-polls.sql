-- Up Migration
-- Polls of watched resources, counted for each consumer who watches them (GET /watch).
ALTER TABLE atrium_usage ADD COLUMN watch_polls bigint NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE atrium_usage DROP COLUMN watch_polls;

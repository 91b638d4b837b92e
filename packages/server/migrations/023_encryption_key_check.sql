-- A value sealed with HERALD_ENCRYPTION_KEY when the database was first opened by a gateway that
-- checks its key (crypto/key-check.ts): a gateway started with another key is refused at once,
-- instead of failing every delivery that needs a contact and every signed webhook.
CREATE TABLE IF NOT EXISTS encryption_key_check (
  id integer PRIMARY KEY CHECK (id = 1),
  sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

import { ConfigError } from '../config.js';
import type { Queryable } from '../db/connection.js';
import type { SecretBox } from './secret-box.js';

const CHECK_PLAINTEXT = 'herald encryption key check';

/** The gateway's encryption key does not open what its database holds. */
const mismatch = (what: string) =>
  new ConfigError(
    'HERALD_ENCRYPTION_KEY',
    `does not open ${what} in this database, sealed with another key: start the gateway with the key the database was first used with ` +
      '(an embedded data directory keeps it in encryption.key)',
  );

/** Whether `secrets` opens `sealed` (AES-GCM refuses another key's ciphertext). */
function opens(secrets: SecretBox, sealed: string, plaintext?: string): boolean {
  try {
    const opened = secrets.decrypt(sealed);
    return plaintext === undefined || opened === plaintext;
  } catch {
    return false;
  }
}

/**
 * Refuses a key that cannot open the database's sealed values (contacts, webhook secrets): with
 * the wrong key every send that needs a contact, and every webhook, would fail one by one while
 * the API kept accepting. The first gateway to check seals a known value; a database sealed
 * before that is checked against one of its existing sealed values first.
 */
export async function checkEncryptionKey(db: Queryable, secrets: SecretBox): Promise<void> {
  const stored = async () => (await db.query<{ sealed: string }>('SELECT sealed FROM encryption_key_check WHERE id = 1'))[0]?.sealed;
  let sealed = await stored();
  if (sealed === undefined) {
    const [existing] = await db.query<{ sealed: string; what: string }>(
      `(SELECT coalesce(email_enc, phone_enc, telegram_chat_enc) AS sealed, 'the wallets'' contacts' AS what FROM identities
        WHERE coalesce(email_enc, phone_enc, telegram_chat_enc) IS NOT NULL LIMIT 1)
       UNION ALL
       (SELECT secret_enc, 'the webhook secrets' FROM webhook_endpoints LIMIT 1)
       LIMIT 1`,
    );
    if (existing && !opens(secrets, existing.sealed)) throw mismatch(existing.what);
    await db.query('INSERT INTO encryption_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [secrets.encrypt(CHECK_PLAINTEXT)]);
    // Read back: another gateway starting at the same moment may have sealed it first, with its own key.
    sealed = (await stored())!;
  }
  if (!opens(secrets, sealed, CHECK_PLAINTEXT)) throw mismatch('the key check');
}

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError } from '../../packages/server/src/config.js';
import { checkEncryptionKey } from '../../packages/server/src/crypto/key-check.js';
import { SecretBox } from '../../packages/server/src/crypto/secret-box.js';
import { migrate } from '../../packages/server/src/db/migrate.js';
import { withEmptyDatabase } from '../support/database.js';

const box = () => new SecretBox(randomBytes(32));
const refusal = (error: unknown) => error instanceof ConfigError && error.variable === 'HERALD_ENCRYPTION_KEY';

describe('the encryption key check at start-up', () => {
  it('seals a known value on first start, then accepts that key and refuses any other', async () => {
    await withEmptyDatabase(async (db) => {
      await migrate(db);
      const first = box();
      await checkEncryptionKey(db, first);
      await checkEncryptionKey(db, first);
      const [row] = await db.query<{ sealed: string }>('SELECT sealed FROM encryption_key_check');
      assert.match(row.sealed, /^v1\./);
      await assert.rejects(checkEncryptionKey(db, box()), (error) => refusal(error) && /key check/.test((error as Error).message));
    });
  });

  it('checks a database sealed before the check existed against one of its contacts or webhook secrets', async () => {
    await withEmptyDatabase(async (db) => {
      await migrate(db);
      const owner = box();
      await db.query("INSERT INTO identities (wallet, email_enc, email_verified_at) VALUES ('w1', $1, now())", [owner.encrypt('holder@example.com')]);
      await assert.rejects(checkEncryptionKey(db, box()), (error) => refusal(error) && /contacts/.test((error as Error).message));
      assert.equal((await db.query('SELECT 1 FROM encryption_key_check')).length, 0, 'a refused key seals nothing');
      await checkEncryptionKey(db, owner);
      assert.equal((await db.query('SELECT 1 FROM encryption_key_check')).length, 1);
    });
  });
});

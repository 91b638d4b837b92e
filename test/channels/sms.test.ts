import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { OutboundMessage } from '../../packages/server/src/channels/provider.js';
import { TwilioProvider } from '../../packages/server/src/channels/sms.js';
import { startTwilioApi, type TestTwilioApi } from '../support/twilio-api.js';

function sms(to: string, text = 'Herald: your position is at risk. Health factor 1.02 & falling.'): OutboundMessage {
  return { channel: 'sms', to, text, meta: { protocolId: 'proto_test', wallet: 'W', environment: 'production' } };
}

describe('Twilio provider', () => {
  let api: TestTwilioApi;
  let provider: TwilioProvider;

  before(async () => {
    api = await startTwilioApi();
    provider = new TwilioProvider({ accountSid: api.accountSid, authToken: api.authToken, from: '+15005550006', apiUrl: api.url });
  });
  after(() => api.close());

  it('posts To, From and Body form-encoded with basic auth', async () => {
    const outcome = await provider.send(sms('+14155550123'));
    assert.equal(outcome.kind, 'delivered');
    assert.match((outcome as { providerResponse: string }).providerResponse, /^sid SM[0-9a-f]{32} status queued$/);
    const request = api.received.at(-1)!;
    assert.equal(request.path, `/2010-04-01/Accounts/${api.accountSid}/Messages.json`);
    assert.equal(request.username, api.accountSid);
    assert.equal(request.password, api.authToken);
    assert.match(request.contentType, /^application\/x-www-form-urlencoded/);
    assert.deepEqual(request.form, { To: '+14155550123', From: '+15005550006', Body: 'Herald: your position is at risk. Health factor 1.02 & falling.' });
    assert.equal(request.status, 201);
  });

  it('sends through a Messaging Service when TWILIO_FROM is an MG sid', async () => {
    const service = `MG${'ab'.repeat(16)}`;
    const viaService = new TwilioProvider({ accountSid: api.accountSid, authToken: api.authToken, from: service, apiUrl: api.url });
    const outcome = await viaService.send(sms('+14155550123', 'Ünïcode ✓ text'));
    assert.equal(outcome.kind, 'delivered');
    assert.deepEqual(api.received.at(-1)!.form, { To: '+14155550123', MessagingServiceSid: service, Body: 'Ünïcode ✓ text' });
  });

  it('maps 21211 (invalid To) to failed, without the number in what it reports', async () => {
    api.script({ kind: 'error', code: 21211 }, { to: '+14155550999' });
    const outcome = await provider.send(sms('+14155550999'));
    assert.equal(outcome.kind, 'failed');
    assert.match(outcome.kind === 'failed' ? outcome.error : '', /^Twilio 400: 21211 The 'To' number \[recipient\] is not a valid phone number\.$/);
    assert.doesNotMatch(JSON.stringify(outcome), /4155550999/);
  });

  it('maps the other permanent Twilio codes to failed', async () => {
    for (const code of [21610, 21614, 21408]) {
      api.script({ kind: 'error', code }, { to: '+447700900123' });
      const outcome = await provider.send(sms('+447700900123'));
      assert.equal(outcome.kind, 'failed', String(code));
      assert.match(outcome.kind === 'failed' ? outcome.error : '', new RegExp(`^Twilio 400: ${code} `));
      assert.doesNotMatch(JSON.stringify(outcome), /7700900123/);
    }
  });

  it('maps 429 to retry, honouring Retry-After', async () => {
    api.script({ kind: 'rate-limited', retryAfter: '3' });
    const outcome = await provider.send(sms('+14155550123'));
    assert.deepEqual(outcome, { kind: 'retry', error: 'Twilio 429: 20429 Too Many Requests', providerResponse: '429 20429 Too Many Requests', retryAfterMs: 3000 });
  });

  it('maps 429 without Retry-After to retry with no wait of its own', async () => {
    api.script({ kind: 'rate-limited' });
    const outcome = await provider.send(sms('+14155550123'));
    assert.equal(outcome.kind, 'retry');
    assert.equal('retryAfterMs' in outcome, false);
  });

  it('maps 500 to retry', async () => {
    api.script({ kind: 'server-error' });
    const outcome = await provider.send(sms('+14155550123'));
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /^Twilio 500: 20500 Internal Server Error$/);
  });

  it('maps refused credentials (401) to failed with a clear error and no secret', async () => {
    const wrong = new TwilioProvider({ accountSid: api.accountSid, authToken: 'wrong-token-do-not-show', from: '+15005550006', apiUrl: api.url });
    const outcome = await wrong.send(sms('+14155550123'));
    assert.equal(outcome.kind, 'failed');
    assert.equal(
      outcome.kind === 'failed' && outcome.error,
      'Twilio refused the credentials (401 20003 Authenticate), check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN',
    );
    assert.doesNotMatch(JSON.stringify(outcome), /wrong-token/);
  });

  it('maps a closed port and a timeout to retry', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const down = new TwilioProvider({ accountSid: api.accountSid, authToken: api.authToken, from: '+15005550006', apiUrl: `http://127.0.0.1:${port}` });
    assert.deepEqual(await down.send(sms('+14155550123')), { kind: 'retry', error: 'Twilio unreachable: ECONNREFUSED' });

    api.script({ kind: 'delay', ms: 500 });
    const slow = new TwilioProvider({ accountSid: api.accountSid, authToken: api.authToken, from: '+15005550006', apiUrl: api.url, timeoutMs: 100 });
    assert.deepEqual(await slow.send(sms('+14155550123')), { kind: 'retry', error: 'Twilio unreachable: no answer within 100 ms' });
  });
});

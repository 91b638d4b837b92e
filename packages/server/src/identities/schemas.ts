import { Type } from '@sinclair/typebox';
import { WalletSchema } from '../wallet.js';

const ChannelStateSchema = Type.Union([Type.Literal('verified'), Type.Literal('pending'), Type.Literal('none')]);
export const ChannelSchema = Type.Union([Type.Literal('email'), Type.Literal('telegram'), Type.Literal('sms')]);

export const EmailSchema = Type.String({ format: 'email', maxLength: 254, description: 'Email address' });
// 7 to 15 digits: E.164 allows 15 at most, and the shortest numbers in use have 7 (+683 4001, Niue).
export const PhoneSchema = Type.String({ pattern: '^\\+[1-9]\\d{6,14}$', description: 'A phone number in E.164 form, e.g. +14155550123' });
export const TelegramChatIdSchema = Type.String({ pattern: '^-?\\d{1,20}$', description: 'A Telegram chat id, as a string of digits' });

export const Nonce = Type.String({ minLength: 1, maxLength: 128, description: 'The nonce of the challenge that was signed' });
export const Signature = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The wallet's ed25519 signature of the exact challenge message (UTF-8 bytes), 64 bytes as base58 or base64",
});

export const ChallengeBody = Type.Object({
  wallet: WalletSchema,
  purpose: Type.Optional(
    Type.Union([Type.Literal('register'), Type.Literal('delete')], {
      default: 'register',
      description: 'What the signature will allow: `register` (also updates contacts) or `delete`',
    }),
  ),
});

export const ChallengeResponse = Type.Object({
  message: Type.String({ description: 'The exact text to sign' }),
  nonce: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const RegisterBody = Type.Object({
  wallet: WalletSchema,
  nonce: Nonce,
  signature: Signature,
  email: Type.Optional(Type.Union([EmailSchema, Type.Null()], { description: 'Omit to keep the current address, null to remove it' })),
  phone: Type.Optional(Type.Union([PhoneSchema, Type.Null()], { description: 'Omit to keep the current number, null to remove it' })),
});

export const RegisterResponse = Type.Object({
  wallet: Type.String(),
  registered: Type.Literal(true),
  channels: Type.Object({ email: ChannelStateSchema, telegram: ChannelStateSchema, sms: ChannelStateSchema }),
  awaitingVerification: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('sms')]), {
    description: 'Contacts waiting for their code: new ones, and replacements of verified ones (which serve until then)',
  }),
  telegramLink: Type.String({ description: 'Open to link a Telegram chat; single use' }),
  telegramLinkExpiresAt: Type.String({ format: 'date-time' }),
});

export const VerifyBody = Type.Object({
  wallet: WalletSchema,
  channel: Type.Union([Type.Literal('email'), Type.Literal('sms')]),
  code: Type.String({ pattern: '^\\d{6}$', description: 'The 6-digit code that was sent' }),
});

export const VerifyResponse = Type.Object({ wallet: Type.String(), channel: Type.String(), verified: Type.Literal(true) });

export const WalletParams = Type.Object({ wallet: WalletSchema });

export const DeleteBody = Type.Object({ nonce: Nonce, signature: Signature });

export const WalletStatusResponse = Type.Object({
  registered: Type.Boolean(),
  channels: Type.Array(ChannelSchema, { description: 'Verified channels; never the contact values' }),
});

export const ImportBody = Type.Object({
  wallet: WalletSchema,
  email: Type.Optional(Type.Union([EmailSchema, Type.Null()])),
  phone: Type.Optional(Type.Union([PhoneSchema, Type.Null()])),
  telegramChatId: Type.Optional(Type.Union([TelegramChatIdSchema, Type.Null()])),
});

export const ImportResponse = Type.Object({ wallet: Type.String(), channels: Type.Array(ChannelSchema) });

export const TelegramUpdateBody = Type.Object({
  update_id: Type.Integer(),
  message: Type.Optional(Type.Object({ chat: Type.Object({ id: Type.Integer() }), text: Type.Optional(Type.String()) })),
});

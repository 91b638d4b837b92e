/**
 * Just enough ed25519 point arithmetic to refuse the keys no one owns. A public key of small order
 * (one of the eight torsion points, or a non-canonical encoding of one) is satisfied by forged
 * signatures: with R the identity and S = 0, `[S]B = R + [k]A` holds whenever `[k]A` is the
 * identity, which for such a key happens for one message in eight or for every message. No private
 * key yields such a point (clamped scalars give points of prime order), so refusing them costs an
 * honest wallet nothing; ed25519-dalek's `verify_strict` and libsodium refuse them the same way.
 *
 * BigInt arithmetic: a point is checked once per signature, never on a hot path.
 */

const P = 2n ** 255n - 19n;
const mod = (a: bigint) => ((a % P) + P) % P;

function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

const inverse = (a: bigint) => pow(a, P - 2n);
const D = mod(-121665n * inverse(121666n));
const SQRT_MINUS_ONE = pow(2n, (P - 1n) / 4n);

interface Point {
  x: bigint;
  y: bigint;
}

/**
 * The point a 32-byte encoding stands for (RFC 8032 §5.1.3); undefined when the encoding is not
 * canonical (y ≥ p, or x = 0 with the sign bit set) or names no point on the curve.
 */
export function decodePoint(bytes: Uint8Array): Point | undefined {
  if (bytes.length !== 32) return undefined;
  const sign = bytes[31] >> 7;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? bytes[i] & 0x7f : bytes[i]);
  if (y >= P) return undefined;
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * pow(v, 3n) * pow(u * pow(v, 7n), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 !== u) {
    if (vx2 !== mod(-u)) return undefined;
    x = mod(x * SQRT_MINUS_ONE);
  }
  if (x === 0n && sign === 1) return undefined;
  if (Number(x & 1n) !== sign) x = P - x;
  return { x, y };
}

/** `[8]P` is the identity: three doublings in projective coordinates (dbl-2008-bbjlp, a = −1). */
function timesEightIsIdentity({ x, y }: Point): boolean {
  let [X, Y, Z] = [x, y, 1n];
  for (let i = 0; i < 3; i++) {
    const A = (X * X) % P;
    const B = (Y * Y) % P;
    const C = (2n * Z * Z) % P;
    const E = mod((X + Y) * (X + Y) - A - B);
    const G = mod(B - A);
    const F = mod(G - C);
    const H = mod(-A - B);
    [X, Y, Z] = [(E * F) % P, (G * H) % P, (F * G) % P];
  }
  return X === 0n && Y === Z;
}

/** True when the encoding names a point of order 1, 2, 4 or 8: `[8]A` is the identity. */
export function hasSmallOrder(bytes: Uint8Array): boolean {
  const point = decodePoint(bytes);
  return point !== undefined && timesEightIsIdentity(point);
}

/**
 * True when an honest signer could have produced the encoding: canonical, on the curve and not of
 * small order. Public keys and a signature's R are both `[scalar]B` for a scalar the signer chose,
 * so both always pass; a lenient verifier reads a non-canonical y modulo p, which is why those are
 * refused too rather than reduced.
 */
export function isStrictPoint(bytes: Uint8Array): boolean {
  const point = decodePoint(bytes);
  return point !== undefined && !timesEightIsIdentity(point);
}

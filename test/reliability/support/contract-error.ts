import { STATUS_CODES } from 'node:http';

/** True when `text` is exactly the contract's error body for `status`. */
export function isContractError(status: number, text: string): boolean {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  return (
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    Object.keys(body).sort().join(',') === 'code,error,message,statusCode' &&
    body.statusCode === status &&
    body.error === STATUS_CODES[status] &&
    typeof body.message === 'string' &&
    body.message.length > 0 &&
    typeof body.code === 'string' &&
    /^[A-Z_]+$/.test(body.code)
  );
}

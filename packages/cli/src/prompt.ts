import { createInterface } from 'node:readline';
import { cancelled } from './exit-codes.js';

/** Prompts read the terminal and write to stderr, so stdout keeps only results. */
export interface PromptIo {
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

/** Prompting is allowed only with a person at both ends and never in --json mode. */
export function canPrompt(io: PromptIo, json: boolean): boolean {
  return !json && Boolean(io.stdin.isTTY) && Boolean(io.stderr.isTTY);
}

/** Asks a yes/no question; anything but y/yes is no, Ctrl-C cancels (exit 2). */
export function confirm(io: PromptIo, question: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr });
    let settled = false;
    rl.on('SIGINT', () => {
      settled = true;
      rl.close();
      io.stderr.write('\n');
      reject(cancelled());
    });
    rl.on('close', () => {
      if (!settled) resolve(false);
    });
    rl.question(`${question} [y/N] `, (answer) => {
      settled = true;
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}

/** Reads a secret without echoing it. Enter finishes, Ctrl-C cancels (exit 2). */
export function askSecret(io: PromptIo, question: string): Promise<string> {
  const { stdin, stderr } = io;
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\u0003') return finish(() => reject(cancelled()));
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(() => resolve(value.trim()));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    // Raw mode first: a key typed as soon as the question shows must not be echoed.
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
    stderr.write(question);
  });
}

/** Reads all of stdin (a piped key or file). */
export async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) text += chunk;
  return text;
}

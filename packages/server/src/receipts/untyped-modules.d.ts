// snarkjs and circomlibjs ship no type declarations: these cover the parts Herald calls.

declare module 'circomlibjs' {
  interface PoseidonField {
    toObject(element: Uint8Array): bigint;
  }
  interface Poseidon {
    (inputs: bigint[]): Uint8Array;
    F: PoseidonField;
  }
  export function buildPoseidon(): Promise<Poseidon>;
}

declare module 'snarkjs' {
  export interface Groth16Proof {
    pi_a: string[];
    pi_b: string[][];
    pi_c: string[];
    protocol: string;
    curve: string;
  }
  type MemFile = { type: 'mem'; data: Uint8Array } | string;
  export const groth16: {
    prove(zkey: MemFile, witness: MemFile): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    verify(verificationKey: object, publicSignals: string[], proof: Groth16Proof): Promise<boolean>;
  };
  export const zKey: {
    exportVerificationKey(zkey: MemFile): Promise<Record<string, unknown>>;
  };
  export const curves: {
    getCurveFromName(name: string): Promise<{ terminate(): Promise<void> }>;
  };
}


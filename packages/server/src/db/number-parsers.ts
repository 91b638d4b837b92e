/** Both engines answer with the same JS types: int8 and numeric as numbers (timestamps as Date). */
export const INT8 = 20;
export const NUMERIC = 1700;
export const parseNumber = (value: string) => Number(value);

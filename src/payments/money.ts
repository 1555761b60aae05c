import { reject } from './errors.ts'

/** Currencies whose minor unit is not 1/100 (ISO 4217) */
const EXPONENTS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
}

export function currencyExponent(currency: string) {
  return EXPONENTS[currency.toUpperCase()] ?? 2
}

/**
 * Converts a decimal amount (`"110.00"`, `129.9`) to integer minor units
 * without floating-point arithmetic: the number's shortest decimal
 * representation is split on the dot and read as digits.
 */
export function toMinorUnits(value: unknown, currency = 'BRL'): number {
  const text =
    typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : ''
  const match = /^(-?)(\d{1,15})(?:\.(\d{1,12}))?$/.exec(text)
  if (!match) {
    reject(`amount ${JSON.stringify(value)} is not a decimal number`)
  }
  const exponent = currencyExponent(currency)
  const [, sign, whole, fraction = ''] = match
  const digits = fraction.padEnd(exponent, '0')
  if (digits.slice(exponent).replace(/0/g, '') !== '') {
    reject(`amount ${text} has more decimals than ${currency.toUpperCase()} allows`)
  }
  const minor = Number(whole + digits.slice(0, exponent))
  if (!Number.isSafeInteger(minor)) {
    reject(`amount ${text} is too large`)
  }
  return sign === '-' ? -minor : minor
}

/**
 * Reads an integer amount that is already in minor units.
 */
export function integerAmount(value: unknown): number {
  const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) {
    reject(`amount ${JSON.stringify(value)} is not an integer in minor units`)
  }
  return number
}

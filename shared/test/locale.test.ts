import { describe, expect, it } from 'vitest';
import { AssertionVerifier, generateSigningKeyPair, signAssertion } from '../src/credentials.ts';
import { countryTimeZone, dateInZone, workspaceLocale, workspaceToday } from '../src/locale.ts';
import { testPrincipal } from '../src/testing.ts';

describe('a workspace\'s country and calendar', () => {
  it('reads "today" in the workspace\'s time zone: the same instant is the 26th in Bogotá and the 27th in Amsterdam and Auckland', () => {
    // 2026-11-27 03:30 UTC = 2026-11-26 22:30 in Bogotá (UTC−5, no daylight saving),
    // 04:30 in Amsterdam (UTC+1 in winter), 16:30 in Auckland (UTC+13 in summer).
    const at = new Date('2026-11-27T03:30:00Z');
    expect(workspaceToday({ country: 'CO' }, at)).toBe('2026-11-26');
    expect(workspaceToday({ country: 'NL' }, at)).toBe('2026-11-27');
    expect(workspaceToday({ country: 'NZ' }, at)).toBe('2026-11-27');
    // Bogotá's midnight is 05:00 UTC: a minute before it is still the 26th there, a minute after the 27th.
    expect(workspaceToday({ country: 'CO' }, new Date('2026-11-27T04:59:00Z'))).toBe('2026-11-26');
    expect(workspaceToday({ country: 'CO' }, new Date('2026-11-27T05:01:00Z'))).toBe('2026-11-27');
    // Daylight saving is the zone's: Amsterdam is UTC+2 on 2026-07-01, so 22:30 UTC is already the 2nd there.
    expect(dateInZone(new Date('2026-07-01T22:30:00Z'), 'Europe/Amsterdam')).toBe('2026-07-02');
    expect(dateInZone(new Date('2026-01-01T22:30:00Z'), 'Europe/Amsterdam')).toBe('2026-01-01');
  });

  it('reads a principal without a country as Colombian, and a country it does not know in UTC', () => {
    expect(workspaceLocale({})).toEqual({ country: 'CO', timeZone: 'America/Bogota' });
    expect(workspaceLocale({ country: 'NL' })).toEqual({ country: 'NL', timeZone: 'Europe/Amsterdam' });
    expect(workspaceLocale({ country: 'KE' })).toEqual({ country: 'KE', timeZone: 'UTC' });
    expect(workspaceLocale({ country: 'nl' }).country).toBe('CO');
    expect(countryTimeZone('CO')).toBe('America/Bogota');
  });

  it('carries the country in the gateway\'s assertion, and a principal without one stays without', () => {
    const keys = generateSigningKeyPair();
    const verifier = new AssertionVerifier(keys.publicKey);
    const dutch = testPrincipal({ country: 'NL' });
    expect(verifier.verify(signAssertion(dutch, keys.privateKey))).toEqual(dutch);
    const plain = testPrincipal();
    expect(verifier.verify(signAssertion(plain, keys.privateKey))).not.toHaveProperty('country');
  });
});

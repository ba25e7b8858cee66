/** How the register pressure heat map shades a line: one of a few levels by its share of the kernel's peak. Pure (tested in test/unit). */

/** Levels 0 (lightest) to LEVELS - 1 (the peak). */
export const PRESSURE_LEVELS = 5;

export function pressureLevel(live: number, peak: number): number {
  if (peak <= 0 || live <= 0) return 0;
  return Math.min(PRESSURE_LEVELS - 1, Math.floor((Math.min(live, peak) / peak) * PRESSURE_LEVELS - 1e-9));
}

/** The level's background: warmer and more opaque towards the peak. */
export function levelColor(level: number): string {
  const alpha = (0.06 + 0.07 * level).toFixed(2);
  return `rgba(255, ${Math.round(160 - 30 * level)}, 0, ${alpha})`;
}

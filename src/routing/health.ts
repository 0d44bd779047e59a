/**
 * Passive health per endpoint, as a small circuit breaker:
 * healthy --(N consecutive failures)--> cooldown --(time passes)--> half_open
 * half_open --(trial succeeds)--> healthy; --(trial fails)--> cooldown (longer).
 * The cooldown doubles on each consecutive trip, up to a cap.
 */
export type HealthState = "healthy" | "cooldown" | "half_open";

export interface HealthSettings {
  failure_threshold: number;
  cooldown: number; // ms
  max_cooldown: number; // ms
}

export class EndpointHealth {
  private consecutiveFailures = 0;
  private trips = 0;
  private cooldownUntil = 0;
  private trialInFlight = false;

  constructor(
    private settings: HealthSettings,
    private readonly onChange: (state: HealthState, reason: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  updateSettings(settings: HealthSettings): void {
    this.settings = settings;
  }

  state(): HealthState {
    if (this.cooldownUntil === 0) return "healthy";
    return this.now() < this.cooldownUntil ? "cooldown" : "half_open";
  }

  /** Milliseconds until a cooldown ends (0 when not cooling down). */
  retryAfterMs(): number {
    return Math.max(0, this.cooldownUntil - this.now());
  }

  /**
   * May a request go here now? In half-open only one trial at a time passes;
   * `claim` marks that trial as taken.
   */
  admits(claim: boolean): boolean {
    const s = this.state();
    if (s === "healthy") return true;
    if (s === "cooldown" || this.trialInFlight) return false;
    if (claim) this.trialInFlight = true;
    return true;
  }

  recordSuccess(): void {
    this.trialInFlight = false;
    this.consecutiveFailures = 0;
    if (this.cooldownUntil !== 0) {
      this.cooldownUntil = 0;
      this.trips = 0;
      this.onChange("healthy", "trial request succeeded");
    }
  }

  recordFailure(reason: string): void {
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    this.consecutiveFailures++;
    if (wasTrial || this.consecutiveFailures >= this.settings.failure_threshold) {
      this.trips++;
      const ms = Math.min(this.settings.max_cooldown, this.settings.cooldown * 2 ** (this.trips - 1));
      this.cooldownUntil = this.now() + ms;
      this.consecutiveFailures = 0;
      this.onChange("cooldown", `${reason}; cooling down for ${ms} ms`);
    }
  }

  /** A trial that ended without a verdict (e.g. client aborted) frees the half-open slot. */
  releaseTrial(): void {
    this.trialInFlight = false;
  }
}

/**
 * Passive health per endpoint, modelled on Envoy's outlier detection:
 * healthy --(N consecutive endpoint failures)--> cooldown (ejected) --(time passes)--> half_open
 * half_open --(trial succeeds)--> healthy; --(trial fails)--> cooldown (longer).
 * The cooldown doubles on each consecutive trip, up to a cap. Every transition,
 * including the timed cooldown -> half_open one, is reported through onChange.
 * Optional active probes feed recordProbe(): a success ends a cooldown early.
 *
 * Only endpoint failures are recorded here (see UpstreamFailure.endpointFault), at
 * most one per client request. While every endpoint of a pool is ejected the pool
 * still routes to them ("panic", least recently failed first): such a request that
 * succeeds ends the cooldown; one that fails only moves lastFailureAt (no new trip).
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
  private halfOpenTimer: NodeJS.Timeout | undefined;
  /** When the last endpoint failure was recorded (0: never); panic routing prefers the oldest. */
  lastFailureAt = 0;

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

  recordSuccess(reason?: string): void {
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    this.consecutiveFailures = 0;
    if (this.cooldownUntil !== 0) this.recover(reason ?? (wasTrial || this.state() === "half_open" ? "trial request succeeded" : "request succeeded while every endpoint was ejected (panic routing)"));
  }

  recordFailure(reason: string): void {
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    this.lastFailureAt = this.now();
    // Already ejected (a panic-routed request failed): the cooldown stands as it is.
    if (this.state() === "cooldown") return;
    this.consecutiveFailures++;
    if (wasTrial || this.state() === "half_open" || this.consecutiveFailures >= this.settings.failure_threshold) this.trip(reason);
  }

  /**
   * An active probe's verdict. Success ends a cooldown at once (but does not clear
   * request failures counted while healthy: /models may answer while inference
   * fails). Failure counts like a request failure when healthy, fails the trial
   * when half-open, and changes nothing while already cooling down.
   */
  recordProbe(ok: boolean, reason: string): void {
    const s = this.state();
    if (ok) {
      if (s !== "healthy") this.recover(reason);
    } else if (s === "half_open") this.trip(reason);
    else if (s === "healthy") this.recordFailure(reason);
  }

  /** Stops the timer that announces the end of a cooldown. */
  close(): void {
    clearTimeout(this.halfOpenTimer);
  }

  private trip(reason: string): void {
    this.trialInFlight = false;
    this.trips++;
    const ms = Math.min(this.settings.max_cooldown, this.settings.cooldown * 2 ** (this.trips - 1));
    this.cooldownUntil = this.now() + ms;
    this.consecutiveFailures = 0;
    this.announceHalfOpenIn(ms);
    this.onChange("cooldown", `${reason}; cooling down for ${ms} ms`);
  }

  /** Reports half_open when the cooldown ends (timers may fire a little before the clock says so: re-arm). */
  private announceHalfOpenIn(ms: number): void {
    clearTimeout(this.halfOpenTimer);
    this.halfOpenTimer = setTimeout(() => {
      const s = this.state();
      if (s === "half_open") this.onChange("half_open", "cooldown over; the next request is a trial");
      else if (s === "cooldown") this.announceHalfOpenIn(this.retryAfterMs() + 1);
    }, ms);
    this.halfOpenTimer.unref();
  }

  private recover(reason: string): void {
    clearTimeout(this.halfOpenTimer);
    this.cooldownUntil = 0;
    this.trips = 0;
    this.consecutiveFailures = 0;
    this.onChange("healthy", reason);
  }

  /** A trial that ended without a verdict (e.g. client aborted) frees the half-open slot. */
  releaseTrial(): void {
    this.trialInFlight = false;
  }
}

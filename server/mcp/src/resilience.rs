//! What keeps a failing server from hanging or flooding a session: error classes, a three-state
//! circuit breaker per server, and retry delays with exponential backoff and jitter.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Why a call failed, which decides what happens next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureClass {
    /// The server could not be reached (spawn, connect or handshake failed; the connection
    /// dropped): retried when safe, counts against the circuit.
    Transient,
    /// The server is there but failed (timeout, internal error): counts against the circuit,
    /// never retried (the call may have had effects).
    Server,
    /// The request was wrong (unknown tool, invalid arguments): the model must change it;
    /// the server is healthy.
    Client,
}

impl FailureClass {
    /// Lower-case name for results and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Server => "server",
            Self::Client => "client",
        }
    }
}

/// The breaker's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitState {
    /// Calls go through.
    Closed,
    /// Calls fail fast until `until`.
    Open {
        /// When a probe may go.
        until: Instant,
    },
    /// One probe call is in flight; its outcome closes or re-opens the circuit.
    HalfOpen,
}

/// Breaker settings.
#[derive(Clone, Copy, Debug)]
pub struct BreakerConfig {
    /// Failures within `window` that open the circuit.
    pub threshold: usize,
    /// The window.
    pub window: Duration,
    /// First cooldown; each re-open after a failed probe doubles it, up to `max_cooldown`.
    pub cooldown: Duration,
    /// Longest cooldown.
    pub max_cooldown: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            threshold: 3,
            window: Duration::from_secs(60),
            cooldown: Duration::from_secs(5),
            max_cooldown: Duration::from_secs(300),
        }
    }
}

/// A three-state circuit breaker (closed → open after `threshold` failures in `window` →
/// half-open probe after a cooldown that grows while probes fail).
#[derive(Debug)]
pub struct Breaker {
    config: BreakerConfig,
    state: CircuitState,
    failures: VecDeque<Instant>,
    cooldown: Duration,
}

/// What the breaker says about a call about to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Go.
    Go,
    /// Go: this call is the half-open probe.
    Probe,
    /// Fail fast; the circuit may be probed after this long.
    Reject(Duration),
}

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig) -> Self {
        Self { config, state: CircuitState::Closed, failures: VecDeque::new(), cooldown: config.cooldown }
    }

    /// The current state.
    pub fn state(&self) -> CircuitState {
        self.state
    }

    /// Asks to start a call at `now`.
    pub fn admit(&mut self, now: Instant) -> Admission {
        match self.state {
            CircuitState::Closed => Admission::Go,
            CircuitState::HalfOpen => Admission::Reject(Duration::ZERO),
            CircuitState::Open { until } if now >= until => {
                self.state = CircuitState::HalfOpen;
                Admission::Probe
            }
            CircuitState::Open { until } => Admission::Reject(until - now),
        }
    }

    /// Records a success (a probe's success closes the circuit and resets the cooldown).
    pub fn success(&mut self) {
        self.state = CircuitState::Closed;
        self.failures.clear();
        self.cooldown = self.config.cooldown;
    }

    /// Records a failure of `class` at `now`; returns true when it opened the circuit.
    pub fn failure(&mut self, class: FailureClass, now: Instant) -> bool {
        if class == FailureClass::Client {
            // The server answered: a half-open probe that gets a client error proves it is up.
            if self.state == CircuitState::HalfOpen {
                self.success();
            }
            return false;
        }
        match self.state {
            CircuitState::HalfOpen => {
                self.cooldown = (self.cooldown * 2).min(self.config.max_cooldown);
                self.state = CircuitState::Open { until: now + self.cooldown };
                true
            }
            CircuitState::Open { .. } => false,
            CircuitState::Closed => {
                self.failures.push_back(now);
                while self.failures.front().is_some_and(|t| now.duration_since(*t) > self.config.window) {
                    self.failures.pop_front();
                }
                if self.failures.len() >= self.config.threshold {
                    self.failures.clear();
                    self.state = CircuitState::Open { until: now + self.cooldown };
                    true
                } else {
                    false
                }
            }
        }
    }

    /// A probe that never reported (cancelled): back to open for another try right away.
    pub fn probe_abandoned(&mut self, now: Instant) {
        if self.state == CircuitState::HalfOpen {
            self.state = CircuitState::Open { until: now };
        }
    }
}

/// Delay before retry `attempt` (1-based): 200 ms × 2^(attempt-1), capped at 5 s, with ±25 %
/// jitter from `seed` (so concurrent callers do not retry in step).
pub fn backoff(attempt: u32, seed: u64) -> Duration {
    let base = 200u64.saturating_mul(1 << attempt.saturating_sub(1).min(10)).min(5_000);
    // xorshift of the seed: cheap, no global RNG.
    let mut x = seed | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    let jitter = (x % 51) as i64 - 25; // -25..=25 percent
    Duration::from_millis((base as i64 + base as i64 * jitter / 100).max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_probes_after_cooldown_and_grows_the_cooldown() {
        let config = BreakerConfig {
            threshold: 3,
            window: Duration::from_secs(10),
            cooldown: Duration::from_secs(1),
            max_cooldown: Duration::from_secs(3),
        };
        let mut b = Breaker::new(config);
        let t0 = Instant::now();
        assert!(!b.failure(FailureClass::Server, t0));
        assert!(!b.failure(FailureClass::Client, t0), "client errors do not count");
        assert!(!b.failure(FailureClass::Transient, t0));
        assert_eq!(b.admit(t0), Admission::Go);
        assert!(b.failure(FailureClass::Transient, t0));
        assert_eq!(b.admit(t0 + Duration::from_millis(400)), Admission::Reject(Duration::from_millis(600)));
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(b.admit(t1), Admission::Probe);
        assert_eq!(b.admit(t1), Admission::Reject(Duration::ZERO), "one probe at a time");
        assert!(b.failure(FailureClass::Transient, t1));
        assert_eq!(b.state(), CircuitState::Open { until: t1 + Duration::from_secs(2) });
        let t2 = t1 + Duration::from_secs(2);
        assert_eq!(b.admit(t2), Admission::Probe);
        b.failure(FailureClass::Server, t2);
        assert_eq!(b.state(), CircuitState::Open { until: t2 + Duration::from_secs(3) }, "capped");
        let t3 = t2 + Duration::from_secs(3);
        assert_eq!(b.admit(t3), Admission::Probe);
        b.success();
        assert_eq!(b.state(), CircuitState::Closed);
        // Old failures slide out of the window.
        let t4 = t3 + Duration::from_secs(100);
        b.failure(FailureClass::Server, t4);
        b.failure(FailureClass::Server, t4);
        assert!(!b.failure(FailureClass::Server, t4 + Duration::from_secs(11)));
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        for seed in [1u64, 42, 7_777, u64::MAX] {
            let first = backoff(1, seed).as_millis();
            let third = backoff(3, seed).as_millis();
            assert!((150..=250).contains(&first), "{first}");
            assert!((600..=1000).contains(&third), "{third}");
            assert!(backoff(20, seed).as_millis() <= 6_250);
        }
    }
}

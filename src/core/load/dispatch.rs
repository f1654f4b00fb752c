//! The open-loop dispatcher: which request to send next, and when, given the schedule, the cap
//! on requests in flight and the clock. The measuring thread asks it what to do and tells it
//! when a request ends; it never reads a clock itself, so the same decisions are tested here.

/// What the dispatcher says to do at a given moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dispatch {
    /// Send request `index` now. `cap_wait_ms` is how long it waited for a free slot after it
    /// was due (0 when a slot was free).
    Send {
        /// The request's index.
        index: u64,
        /// Milliseconds it was held back by the cap.
        cap_wait_ms: f64,
    },
    /// Nothing is due before `at_ms` (run clock).
    WaitUntil {
        /// When the next request is due.
        at_ms: f64,
    },
    /// The next request is due, but `cap` requests are in flight: wait for one to end.
    WaitForSlot,
    /// Every request has been sent.
    Done,
}

/// The dispatcher's state: the schedule, how far it has got, and what is in flight.
#[derive(Clone, Debug)]
pub struct OpenLoop {
    times_ms: Vec<f64>,
    cap: u64,
    next: usize,
    in_flight: u64,
    most_in_flight: u64,
    /// When the request due next was first found held back by the cap.
    held_since_ms: Option<f64>,
}

impl OpenLoop {
    /// A dispatcher for `times_ms` (nondecreasing, from the run's start) with at most `cap`
    /// requests in flight (at least 1).
    pub fn new(times_ms: Vec<f64>, cap: u64) -> Self {
        Self {
            times_ms,
            cap: cap.max(1),
            next: 0,
            in_flight: 0,
            most_in_flight: 0,
            held_since_ms: None,
        }
    }

    /// What to do at `now_ms` (run clock). A `Send` counts the request as in flight.
    pub fn poll(&mut self, now_ms: f64) -> Dispatch {
        let Some(&due_ms) = self.times_ms.get(self.next) else {
            return Dispatch::Done;
        };
        if now_ms < due_ms {
            return Dispatch::WaitUntil { at_ms: due_ms };
        }
        if self.in_flight >= self.cap {
            self.held_since_ms.get_or_insert(now_ms);
            return Dispatch::WaitForSlot;
        }
        let cap_wait_ms = self
            .held_since_ms
            .take()
            .map_or(0.0, |since| (now_ms - since).max(0.0));
        let index = self.next as u64;
        self.next += 1;
        self.in_flight += 1;
        self.most_in_flight = self.most_in_flight.max(self.in_flight);
        Dispatch::Send { index, cap_wait_ms }
    }

    /// A request sent earlier has ended (completed or failed), freeing its slot.
    pub fn ended(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// When request `index` was due, ms from the run's start.
    pub fn due_ms(&self, index: u64) -> Option<f64> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.times_ms.get(i).copied())
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The most requests that were in flight at once.
    pub fn most_in_flight(&self) -> u64 {
        self.most_in_flight
    }

    /// Requests not sent yet.
    pub fn remaining(&self) -> usize {
        self.times_ms.len() - self.next
    }

    /// Gives up the requests not sent yet (the run was cancelled): their indices, after which
    /// the dispatcher is done.
    pub fn abandon(&mut self) -> std::ops::Range<u64> {
        let rest = self.next as u64..self.times_ms.len() as u64;
        self.next = self.times_ms.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the dispatcher against requests that each take `service_ms`, advancing a virtual
    /// clock to the next due time or the next end: the sends it makes, `(index, at, cap wait)`.
    fn simulate(times_ms: Vec<f64>, cap: u64, service_ms: f64) -> (Vec<(u64, f64, f64)>, u64) {
        let mut dispatcher = OpenLoop::new(times_ms, cap);
        let mut now = 0.0;
        let mut ends: Vec<f64> = Vec::new();
        let mut sends = Vec::new();
        loop {
            ends.retain(|&end| {
                if end <= now {
                    dispatcher.ended();
                    false
                } else {
                    true
                }
            });
            match dispatcher.poll(now) {
                Dispatch::Send { index, cap_wait_ms } => {
                    sends.push((index, now, cap_wait_ms));
                    ends.push(now + service_ms);
                    assert!(
                        dispatcher.in_flight() <= cap.max(1),
                        "the cap is never exceeded"
                    );
                }
                Dispatch::WaitUntil { at_ms } => {
                    let next_end = ends.iter().copied().fold(f64::INFINITY, f64::min);
                    now = at_ms.min(next_end);
                }
                Dispatch::WaitForSlot => {
                    now = ends.iter().copied().fold(f64::INFINITY, f64::min);
                }
                Dispatch::Done => break,
            }
        }
        (sends, dispatcher.most_in_flight())
    }

    #[test]
    fn requests_go_out_at_their_time_when_the_cap_allows() {
        let (sends, most) = simulate(vec![0.0, 10.0, 20.0, 30.0], 4, 5.0);
        assert_eq!(
            sends,
            [
                (0, 0.0, 0.0),
                (1, 10.0, 0.0),
                (2, 20.0, 0.0),
                (3, 30.0, 0.0)
            ]
        );
        assert_eq!(most, 1);
    }

    #[test]
    fn the_cap_holds_requests_back_and_says_for_how_long() {
        // Four due at once, two slots, 100 ms each: two wait 100 ms for a slot.
        let (sends, most) = simulate(vec![0.0, 0.0, 0.0, 0.0], 2, 100.0);
        assert_eq!(
            sends,
            [
                (0, 0.0, 0.0),
                (1, 0.0, 0.0),
                (2, 100.0, 100.0),
                (3, 100.0, 0.0)
            ]
        );
        assert_eq!(most, 2, "never more than the cap");
    }

    #[test]
    fn a_cap_of_zero_is_one_and_every_request_is_sent_in_order() {
        let times: Vec<f64> = (0..50).map(|i| f64::from(i) * 3.0).collect();
        let (sends, most) = simulate(times, 0, 7.0);
        assert_eq!(most, 1);
        let order: Vec<u64> = sends.iter().map(|send| send.0).collect();
        assert_eq!(order, (0..50).collect::<Vec<u64>>());
        assert!(sends.windows(2).all(|pair| pair[1].1 >= pair[0].1));
    }

    #[test]
    fn nothing_is_sent_early_and_the_due_times_are_kept() {
        let mut dispatcher = OpenLoop::new(vec![5.0, 9.0], 8);
        assert_eq!(dispatcher.poll(0.0), Dispatch::WaitUntil { at_ms: 5.0 });
        assert_eq!(dispatcher.poll(4.999), Dispatch::WaitUntil { at_ms: 5.0 });
        assert_eq!(
            dispatcher.poll(5.5),
            Dispatch::Send {
                index: 0,
                cap_wait_ms: 0.0
            }
        );
        assert_eq!(dispatcher.due_ms(1), Some(9.0));
        assert_eq!(dispatcher.remaining(), 1);
        assert_eq!(dispatcher.poll(6.0), Dispatch::WaitUntil { at_ms: 9.0 });
        assert!(matches!(
            dispatcher.poll(9.0),
            Dispatch::Send { index: 1, .. }
        ));
        assert_eq!(dispatcher.poll(100.0), Dispatch::Done);
        assert_eq!(dispatcher.due_ms(2), None);
    }

    #[test]
    fn abandoning_gives_up_exactly_the_requests_not_sent() {
        let mut dispatcher = OpenLoop::new(vec![0.0, 1.0, 2.0, 3.0], 1);
        assert!(matches!(
            dispatcher.poll(0.0),
            Dispatch::Send { index: 0, .. }
        ));
        assert_eq!(dispatcher.abandon(), 1..4);
        assert_eq!(dispatcher.poll(10.0), Dispatch::Done);
        assert_eq!(dispatcher.abandon(), 4..4);
        assert_eq!(dispatcher.in_flight(), 1, "the one sent is still in flight");
    }
}

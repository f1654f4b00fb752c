//! Which verdicts a comparison of loaded runs shows ([`shown_verdicts`]): when the runs are
//! exactly two groups of repeats, the one verdict between the groups; otherwise each run
//! against the first (the baseline), run by run. The page renders what this returns; the
//! words are [`MetricVerdict::sentence`]'s, the numbers those `strobe-artifact compare`
//! prints.

use crate::core::present::repeats::group_repeats;
use crate::core::read::opened::OpenedArtifact;

use super::{verdict_of_groups, verdict_of_runs, MetricVerdict, Verdict};

/// One verdict as the comparison shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownVerdict {
    /// What A is: the baseline run's label, or the first group's id and size.
    pub a: String,
    /// What B is.
    pub b: String,
    /// The verdict of B against A.
    pub verdict: Verdict,
}

impl ShownVerdict {
    /// "A: …, B: …": what the verdict compares, for its heading.
    pub fn heading(&self) -> String {
        format!("A: {} — B: {}", self.a, self.b)
    }

    /// The metrics whose test found a significant difference.
    pub fn significant(&self) -> impl Iterator<Item = &MetricVerdict> {
        self.verdict
            .metrics
            .iter()
            .filter(|metric| metric.is_significant())
    }
}

impl MetricVerdict {
    /// Whether the test ran and found a difference at α after Holm's correction.
    pub fn is_significant(&self) -> bool {
        matches!(
            self.outcome,
            super::TestOutcome::Tested {
                significant: true,
                ..
            }
        )
    }
}

/// The verdicts for `runs` compared in this order (the first is the baseline).
pub fn shown_verdicts(runs: &[&OpenedArtifact]) -> Vec<ShownVerdict> {
    if runs.len() < 2 {
        return Vec::new();
    }
    let groups = group_repeats(runs);
    let grouped: usize = groups.iter().map(|group| group.members.len()).sum();
    if groups.len() == 2 && grouped == runs.len() {
        let members = |index: usize| -> Vec<&OpenedArtifact> {
            groups[index]
                .members
                .iter()
                .map(|&position| runs[position])
                .collect()
        };
        let (a, b) = (members(0), members(1));
        let name = |index: usize, size: usize| {
            format!("repeat group {} ({size} runs)", groups[index].group_id)
        };
        return vec![ShownVerdict {
            a: name(0, a.len()),
            b: name(1, b.len()),
            verdict: verdict_of_groups(&a, &b),
        }];
    }
    runs[1..]
        .iter()
        .map(|run| ShownVerdict {
            a: runs[0].label(),
            b: run.label(),
            verdict: verdict_of_runs(runs[0], run),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run with `rows` rows whose TTFT is `ttft_ms` plus a small spread, in repeat group
    /// `group` when given.
    fn run(label: &str, ttft_ms: f64, rows: usize, group: Option<(&str, u64)>) -> OpenedArtifact {
        let rows: Vec<String> = (0..rows)
            .map(|index| {
                let ttft = ttft_ms + (index % 7) as f64;
                format!(
                    r#"{{"request_index": {index}, "time_to_first_output_ms": {ttft},
                        "ttft_ms": {ttft}, "e2e_ms": {}, "tpot_ms": 10.0}}"#,
                    ttft + 500.0
                )
            })
            .collect();
        let repeat = group.map_or(String::new(), |(id, index)| {
            format!(r#", "repeat": {{"group_id": "{id}", "index": {index}, "count": 3}}"#)
        });
        OpenedArtifact::from_text(
            label,
            &format!(
                r#"{{"completed": {}, "request_timings": [{}]{repeat}}}"#,
                rows.len(),
                rows.join(",")
            ),
        )
    }

    #[test]
    fn runs_are_each_judged_against_the_baseline() {
        let (a, b, c) = (
            run("a.json", 100.0, 40, None),
            run("b.json", 130.0, 40, None),
            run("c.json", 100.0, 40, None),
        );
        let shown = shown_verdicts(&[&a, &b, &c]);
        assert_eq!(shown.len(), 2);
        assert_eq!(
            (shown[0].a.as_str(), shown[0].b.as_str()),
            ("a.json", "b.json")
        );
        let ttft: Vec<String> = shown[0]
            .significant()
            .map(MetricVerdict::sentence)
            .collect();
        assert!(
            ttft.iter()
                .any(|s| s.starts_with("B's TTFT is 29 % higher")),
            "{ttft:?}"
        );
        assert_eq!(shown[1].significant().count(), 0, "a run like the baseline");
        assert_eq!(
            shown[0].verdict,
            verdict_of_runs(&a, &b),
            "the CLI's numbers"
        );
        assert!(shown_verdicts(&[&a]).is_empty());
    }

    #[test]
    fn two_groups_of_repeats_get_one_verdict_between_them() {
        let runs: Vec<OpenedArtifact> = (0..3)
            .map(|i| run("a.json", 100.0 + i as f64, 12, Some(("g-a", i))))
            .chain((0..3).map(|i| run("b.json", 150.0 + i as f64, 12, Some(("g-b", i)))))
            .collect();
        let refs: Vec<&OpenedArtifact> = runs.iter().collect();
        let shown = shown_verdicts(&refs);
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].a, "repeat group g-a (3 runs)");
        assert_eq!(shown[0].verdict, verdict_of_groups(&refs[..3], &refs[3..]));
        assert_eq!(
            shown[0].heading(),
            "A: repeat group g-a (3 runs) — B: repeat group g-b (3 runs)"
        );
        // A run outside the groups: run by run again.
        let lone = run("lone.json", 100.0, 12, None);
        let mut with_lone = refs.clone();
        with_lone.push(&lone);
        assert_eq!(shown_verdicts(&with_lone).len(), 6);
    }
}

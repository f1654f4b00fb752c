//! Repeated runs gathered into their groups ([`group_repeats`]) by their `repeat` blocks, so
//! that dropping a group's files (or its zip) gives the group again, whatever order the files
//! come in; the verdict ([`crate::core::present::verdict`]) then compares two groups. A sweep
//! whose steps were repeated has one group per step: [`sweep_loads`] tells the loads a set of
//! runs spans, so runs of several steps are never taken for repeats of one another. While a group runs in the
//! page, [`group_status`] words where it is.

use std::borrow::Borrow;

use crate::core::read::opened::OpenedArtifact;

/// One group of repeated runs among the loaded ones.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatGroup {
    /// The group's id as the files state it.
    pub group_id: String,
    /// Positions (in the slice given to [`group_repeats`]) of the group's runs, by repeat
    /// index, then by position.
    pub members: Vec<usize>,
    /// The repeats the group planned (the largest `count` its files state).
    pub planned: Option<u64>,
    /// Repeat indexes below `planned` that no loaded file has: a group with gaps is shown
    /// with what it has, and says which repeats are missing.
    pub missing: Vec<u64>,
    /// Repeat indexes more than one loaded file claims (the same file dropped twice, or two
    /// groups that share an id).
    pub duplicated: Vec<u64>,
}

/// The groups among `runs`, in the order their first file appears; runs without a `repeat`
/// block (or without a group id) belong to none.
pub fn group_repeats<R: Borrow<OpenedArtifact>>(runs: &[R]) -> Vec<RepeatGroup> {
    let mut groups: Vec<RepeatGroup> = Vec::new();
    for (position, run) in runs.iter().map(Borrow::borrow).enumerate() {
        let Some(id) = run
            .repeat
            .as_ref()
            .and_then(|repeat| repeat.group_id.as_ref())
        else {
            continue;
        };
        let id = id.to_string();
        match groups.iter_mut().find(|group| group.group_id == id) {
            Some(group) => group.members.push(position),
            None => groups.push(RepeatGroup {
                group_id: id,
                members: vec![position],
                planned: None,
                missing: Vec::new(),
                duplicated: Vec::new(),
            }),
        }
    }
    let index_of = |position: usize| {
        runs[position]
            .borrow()
            .repeat
            .as_ref()
            .and_then(|repeat| repeat.index)
    };
    for group in &mut groups {
        group
            .members
            .sort_by_key(|&position| (index_of(position).unwrap_or(u64::MAX), position));
        group.planned = group
            .members
            .iter()
            .filter_map(|&position| {
                runs[position]
                    .borrow()
                    .repeat
                    .as_ref()
                    .and_then(|r| r.count)
            })
            .max();
        let indexes: Vec<u64> = group.members.iter().filter_map(|&p| index_of(p)).collect();
        group.duplicated = indexes
            .windows(2)
            .filter(|pair| pair[0] == pair[1])
            .map(|pair| pair[0])
            .collect();
        group.duplicated.dedup();
        if let Some(planned) = group.planned {
            group.missing = (0..planned.min(64))
                .filter(|index| !indexes.contains(index))
                .collect();
        }
    }
    groups
}

/// One load of a sweep among some runs: what its steps vary, the value, and which steps of
/// which sweeps ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepLoad {
    /// `concurrency` or `rate`, as the `sweep` block states it.
    pub variable: String,
    /// The step's value.
    pub value: f64,
    /// The steps that ran it: "step 1 of sweep-…", each once.
    pub steps: Vec<String>,
}

impl SweepLoad {
    /// "concurrency 4 (step 3 of sweep-…)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({})",
            self.variable,
            self.value,
            self.steps.join(", ")
        )
    }
}

/// The sweep loads `runs` span, in the order they first appear; runs without a `sweep` block
/// (or whose block lacks its value) count for none. More than one means the runs are steps of
/// a sweep at different loads: not repeats of one plan, however their `repeat` blocks group
/// them.
pub fn sweep_loads<R: Borrow<OpenedArtifact>>(runs: &[R]) -> Vec<SweepLoad> {
    let mut loads: Vec<SweepLoad> = Vec::new();
    for run in runs.iter().map(Borrow::borrow) {
        let Some(sweep) = &run.sweep else {
            continue;
        };
        let Some(value) = sweep.value else {
            continue;
        };
        let variable = sweep
            .variable
            .as_ref()
            .map_or("value".to_owned(), ToString::to_string);
        let step = format!(
            "step {} of {}",
            sweep
                .step_index
                .map_or("?".to_owned(), |index| (index + 1).to_string()),
            sweep
                .id
                .as_ref()
                .map_or("a sweep".to_owned(), ToString::to_string)
        );
        match loads
            .iter_mut()
            .find(|load| load.variable == variable && load.value == value)
        {
            Some(load) if load.steps.contains(&step) => {}
            Some(load) => load.steps.push(step),
            None => loads.push(SweepLoad {
                variable,
                value,
                steps: vec![step],
            }),
        }
    }
    loads
}

/// Where a group of repeats run in the page is, in words: `filed` of `planned` runs, the
/// cool-down before the next (`cooling_s` left), and whether Cancel ended it early.
pub fn group_status(
    filed: usize,
    planned: u64,
    cooling_s: Option<f64>,
    cancelled: bool,
    running: bool,
) -> String {
    let head = format!("Repeats · {filed} of {planned} runs");
    let left = planned.saturating_sub(filed as u64);
    match (cooling_s, cancelled, running) {
        (Some(seconds), false, _) => {
            format!("{head}; cooling down {seconds:.1} s before the next")
        }
        (_, true, false) if left > 0 => {
            format!("{head}; cancelled, {left} not run (the runs filed are kept)")
        }
        (_, true, true) => format!("{head}; cancelling"),
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of step `step` (value `value`) of sweep `sweep`, repeat `index` of the step's group.
    fn step_run(sweep: &str, step: u64, value: f64, index: u64) -> OpenedArtifact {
        OpenedArtifact::from_text(
            "run.json",
            &format!(
                r#"{{"sweep": {{"id": "{sweep}", "step_index": {step}, "variable": "concurrency",
                    "value": {value}}},
                    "repeat": {{"group_id": "repeat-{sweep}-step{step}", "index": {index},
                    "count": 2}}}}"#
            ),
        )
    }

    #[test]
    fn a_swept_set_of_repeats_spans_one_load_per_step() {
        let runs = [
            step_run("s", 0, 1.0, 0),
            step_run("s", 0, 1.0, 1),
            step_run("s", 1, 2.0, 0),
            step_run("s", 1, 2.0, 1),
        ];
        let groups = group_repeats(&runs);
        assert_eq!(groups.len(), 2, "one group per step");
        let loads = sweep_loads(&runs);
        assert_eq!(loads.len(), 2);
        assert_eq!(loads[0].describe(), "concurrency 1 (step 1 of s)");
        assert_eq!(loads[1].describe(), "concurrency 2 (step 2 of s)");
        assert_eq!(sweep_loads(&runs[..2]).len(), 1, "one step's repeats");
        // The same load in two sweeps is one load of two steps.
        let two = [step_run("s", 0, 1.0, 0), step_run("t", 2, 1.0, 0)];
        let loads = sweep_loads(&two);
        assert_eq!(loads.len(), 1);
        assert_eq!(loads[0].steps, ["step 1 of s", "step 3 of t"]);
        let plain = [OpenedArtifact::from_text("a.json", "{}")];
        assert!(sweep_loads(&plain).is_empty(), "runs outside a sweep");
    }

    #[test]
    fn a_running_group_says_how_far_it_is_and_what_cancel_left() {
        assert_eq!(
            group_status(1, 3, None, false, true),
            "Repeats · 1 of 3 runs"
        );
        assert_eq!(
            group_status(1, 3, Some(4.25), false, true),
            "Repeats · 1 of 3 runs; cooling down 4.2 s before the next"
        );
        assert_eq!(
            group_status(1, 3, Some(4.0), true, true),
            "Repeats · 1 of 3 runs; cancelling"
        );
        assert_eq!(
            group_status(1, 3, None, true, false),
            "Repeats · 1 of 3 runs; cancelled, 2 not run (the runs filed are kept)"
        );
        // Cancel pressed during the last run: every run was filed, nothing is missing.
        assert_eq!(
            group_status(3, 3, None, true, false),
            "Repeats · 3 of 3 runs"
        );
        assert_eq!(
            group_status(3, 3, None, false, false),
            "Repeats · 3 of 3 runs"
        );
    }
}

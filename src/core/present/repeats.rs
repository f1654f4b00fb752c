//! Repeated runs gathered into their groups ([`group_repeats`]) by their `repeat` blocks, so
//! that dropping a group's files (or its zip) gives the group again, whatever order the files
//! come in; the verdict ([`crate::core::present::verdict`]) then compares two groups.

use std::borrow::Borrow;

use crate::core::read::loaded::LoadedArtifact;

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
pub fn group_repeats<R: Borrow<LoadedArtifact>>(runs: &[R]) -> Vec<RepeatGroup> {
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

//! What the simulated model says: it reads the benchmark's output contract from the prompt and
//! plans the reasoning and content tokens it will stream.
//!
//! strobe's prompts (ARTIFACT.md §2) end with instructions such as
//! ` Begin with the exact marker ANVIL_REQ_1717_00000, followed by one space.` and
//! ` Then emit exactly 32 repetitions of the lowercase word code, separated by single spaces.`.
//! A good model obeys them, so this one does: the marker comes first, then one space, then exactly
//! the requested words. Without a word count it writes filler words until a natural stop or
//! `max_tokens`. Every content delta and every reasoning delta is one completion token. Pure.

use crate::rng::SimRng;

/// The instruction that introduces a canary marker.
const MARKER_INSTRUCTION: &str = "Begin with the exact marker ";
/// The instruction that introduces a word count.
const WORDS_INSTRUCTION: &str = "emit exactly ";
/// What follows the word count.
const WORDS_FOLLOW: &str = " repetitions of the lowercase word ";

/// Ordinary words for filler answers.
const FILLER_WORDS: &[&str] = &[
    "the",
    "server",
    "streams",
    "tokens",
    "while",
    "requests",
    "wait",
    "in",
    "a",
    "queue",
    "and",
    "each",
    "prefill",
    "reads",
    "cached",
    "blocks",
    "before",
    "decode",
    "begins",
    "latency",
    "grows",
    "with",
    "load",
    "so",
    "we",
    "measure",
    "time",
    "to",
    "first",
    "output",
    "throughput",
    "under",
    "steady",
    "traffic",
    "helpers",
    "compute",
    "routine",
    "values",
    "summary",
    "context",
];
/// Words for reasoning deltas.
const REASONING_WORDS: &[&str] = &[
    "let",
    "me",
    "think",
    "about",
    "the",
    "request",
    "first",
    "then",
    "answer",
    "briefly",
    "checking",
    "instructions",
    "carefully",
];
/// Words with multibyte UTF-8 characters, used by the `utf8-split` fault.
const MULTIBYTE_WORDS: &[&str] = &[
    "naïve",
    "café",
    "größe",
    "日本語",
    "π≈3.14",
    "🙂",
    "Ωmega",
    "señor",
    "Zürich",
    "東京",
];

/// The output contract a prompt asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptContract {
    /// The marker the answer must begin with, e.g. `ANVIL_REQ_1717_00000`.
    pub marker: Option<String>,
    /// How many repetitions of which word the answer must contain after the marker.
    pub words: Option<WordContract>,
}

/// "Emit exactly `count` repetitions of the lowercase word `word`".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordContract {
    /// Number of repetitions.
    pub count: u32,
    /// The word, e.g. `code`.
    pub word: String,
}

/// Reads the output contract from a prompt with plain string search.
///
/// The last occurrence of each instruction wins, because strobe puts them in the prompt's tail.
pub fn read_contract(prompt: &str) -> PromptContract {
    let marker = prompt.rfind(MARKER_INSTRUCTION).and_then(|at| {
        let rest = &prompt[at + MARKER_INSTRUCTION.len()..];
        let marker: String = rest.chars().take_while(|c| is_marker_char(*c)).collect();
        (!marker.is_empty()).then_some(marker)
    });
    let words = prompt.rfind(WORDS_INSTRUCTION).and_then(|at| {
        let rest = &prompt[at + WORDS_INSTRUCTION.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let count = digits.parse::<u32>().ok()?;
        let word_part = rest[digits.len()..].strip_prefix(WORDS_FOLLOW)?;
        let word: String = word_part
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        (!word.is_empty()).then_some(WordContract { count, word })
    });
    PromptContract { marker, words }
}

fn is_marker_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// How the planned answer should misbehave with respect to the canary marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerFault {
    /// Begin with a different, well-formed marker instead of the requested one.
    Wrong,
    /// Begin with the requested marker but also mention another request's marker.
    Foreign,
}

/// Everything [`plan_output`] needs besides the prompt contract.
#[derive(Debug, Clone)]
pub struct OutputSettings {
    /// The request's `max_tokens`: reasoning plus content never exceed it.
    pub max_tokens: u32,
    /// Reasoning tokens to produce before the content (0 when thinking is off).
    pub reasoning_tokens: u32,
    /// Typical length of a filler answer, in words; each answer draws 75–125 % of it.
    pub answer_words: u32,
    /// Use multibyte words where the contract leaves room (the `utf8-split` fault).
    pub multibyte: bool,
    /// Misbehave with the marker.
    pub marker_fault: Option<MarkerFault>,
}

/// Why the answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end: the contract was met or the filler answer was complete.
    Stop,
    /// `max_tokens` ran out first.
    Length,
}

impl FinishReason {
    /// The OpenAI spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        }
    }
}

/// The tokens one answer will stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPlan {
    /// Reasoning deltas, one token each.
    pub reasoning: Vec<String>,
    /// Content deltas, one token each; their concatenation is the visible answer.
    pub content: Vec<String>,
    /// Why the answer ends.
    pub finish_reason: FinishReason,
    /// The marker the answer begins with, if any (differs from the contract's under a fault).
    pub emitted_marker: Option<String>,
}

impl OutputPlan {
    /// Completion tokens: reasoning plus content deltas.
    pub fn completion_tokens(&self) -> u32 {
        u32::try_from(self.reasoning.len() + self.content.len()).unwrap_or(u32::MAX)
    }

    /// The visible answer.
    pub fn content_text(&self) -> String {
        self.content.concat()
    }
}

/// Plans the answer for `contract`, drawing filler from `rng`.
pub fn plan_output(
    contract: &PromptContract,
    settings: &OutputSettings,
    rng: &mut SimRng,
) -> OutputPlan {
    let budget = settings.max_tokens as usize;
    let contract_fixes_content = contract.marker.is_some() || contract.words.is_some();
    // A good model keeps the answer exact; multibyte text then travels in the reasoning.
    let reasoning_vocabulary = if settings.multibyte && contract_fixes_content {
        MULTIBYTE_WORDS
    } else {
        REASONING_WORDS
    };
    let reasoning_count = (settings.reasoning_tokens as usize).min(budget);
    let reasoning: Vec<String> = (0..reasoning_count)
        .map(|index| {
            let word = reasoning_vocabulary[index % reasoning_vocabulary.len()];
            if index == 0 {
                word.to_string()
            } else {
                format!(" {word}")
            }
        })
        .collect();

    let mut words: Vec<String> = Vec::new();
    let emitted_marker = match (&contract.marker, settings.marker_fault) {
        (Some(marker), Some(MarkerFault::Wrong)) => Some(other_marker(marker)),
        (None, Some(MarkerFault::Wrong)) => Some(other_marker("ANVIL_REQ_0_00000")),
        (Some(marker), _) => Some(marker.clone()),
        (None, _) => None,
    };
    if let Some(marker) = &emitted_marker {
        words.push(marker.clone());
    }
    if settings.marker_fault == Some(MarkerFault::Foreign) {
        let own = contract.marker.as_deref().unwrap_or("ANVIL_REQ_0_00000");
        words.push(other_marker(own));
    }
    // Only the words that fit in max_tokens are made: a prompt may ask for billions.
    let content_budget = budget - reasoning.len();
    match &contract.words {
        Some(contract_words) => {
            let natural_end = words.len().saturating_add(contract_words.count as usize);
            let wanted = natural_end.min(content_budget).saturating_sub(words.len());
            words.extend(std::iter::repeat_n(contract_words.word.clone(), wanted));
            into_plan(
                words,
                reasoning,
                natural_end,
                content_budget,
                emitted_marker,
            )
        }
        None => {
            let vocabulary = if settings.multibyte {
                MULTIBYTE_WORDS
            } else {
                FILLER_WORDS
            };
            let scale = 0.75 + 0.5 * rng.next_f64();
            let length = ((f64::from(settings.answer_words) * scale).round() as usize).max(1);
            let natural_end = words.len().saturating_add(length);
            let wanted = natural_end.min(content_budget).saturating_sub(words.len());
            words.extend(
                (0..wanted)
                    .map(|_| vocabulary[rng.below(vocabulary.len() as u64) as usize].to_string()),
            );
            into_plan(
                words,
                reasoning,
                natural_end,
                content_budget,
                emitted_marker,
            )
        }
    }
}

/// Cuts `words` to the content budget and spaces them into deltas.
fn into_plan(
    words: Vec<String>,
    reasoning: Vec<String>,
    natural_end: usize,
    content_budget: usize,
    emitted_marker: Option<String>,
) -> OutputPlan {
    let finish_reason = if natural_end <= content_budget {
        FinishReason::Stop
    } else {
        FinishReason::Length
    };
    let content: Vec<String> = words
        .into_iter()
        .take(content_budget)
        .enumerate()
        .map(
            |(index, word)| {
                if index == 0 {
                    word
                } else {
                    format!(" {word}")
                }
            },
        )
        .collect();
    OutputPlan {
        reasoning,
        content,
        finish_reason,
        emitted_marker,
    }
}

/// A well-formed marker that is not `marker`: the same seed with the next request index.
pub fn other_marker(marker: &str) -> String {
    let parsed = marker
        .strip_prefix("ANVIL_REQ_")
        .and_then(|rest| rest.rsplit_once('_'))
        .and_then(|(seed, index)| Some((seed, index.parse::<u32>().ok()?)));
    match parsed {
        Some((seed, index)) => format!("ANVIL_REQ_{seed}_{:05}", (index + 1) % 100_000),
        None => "ANVIL_REQ_0_99999".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail strobe builds for request 3, seed 1717, W = 4 (ARTIFACT.md §2).
    const TAIL_WITH_WORDS: &str = "\n# request 3: Begin with the exact marker ANVIL_REQ_1717_00003, followed by one space. Then emit exactly 4 repetitions of the lowercase word code, separated by single spaces. Do not add other text and do not stop early.";
    /// The tail for W = 0 with canaries.
    const TAIL_SUMMARY: &str = "\n# request 0: Begin with the exact marker ANVIL_REQ_-5_00000, followed by one space. Summarize the above in one line.";

    fn settings(max_tokens: u32) -> OutputSettings {
        OutputSettings {
            max_tokens,
            reasoning_tokens: 0,
            answer_words: 20,
            multibyte: false,
            marker_fault: None,
        }
    }

    #[test]
    fn reads_marker_and_word_count_from_strobes_tail() {
        let prompt = format!(
            "# unique benchmark request ANVIL_REQ_1717_00003\n\ndef helper_3():{TAIL_WITH_WORDS}"
        );
        let contract = read_contract(&prompt);
        assert_eq!(contract.marker.as_deref(), Some("ANVIL_REQ_1717_00003"));
        assert_eq!(
            contract.words,
            Some(WordContract {
                count: 4,
                word: "code".into()
            })
        );
        let summary = read_contract(TAIL_SUMMARY);
        assert_eq!(summary.marker.as_deref(), Some("ANVIL_REQ_-5_00000"));
        assert_eq!(summary.words, None);
        // The older wording ends the marker with a full stop instead of a comma.
        let old = read_contract(" Begin with the exact marker ANVIL_REQ_9_00001.");
        assert_eq!(old.marker.as_deref(), Some("ANVIL_REQ_9_00001"));
        assert_eq!(
            read_contract("summarize the above in one line."),
            PromptContract::default()
        );
    }

    #[test]
    fn obeys_the_marker_and_word_contract_exactly() {
        let contract = read_contract(TAIL_WITH_WORDS);
        let plan = plan_output(&contract, &settings(64), &mut SimRng::new(1));
        assert_eq!(
            plan.content_text(),
            "ANVIL_REQ_1717_00003 code code code code"
        );
        assert_eq!(
            plan.content.len(),
            5,
            "marker plus four words, one token each"
        );
        assert_eq!(plan.finish_reason, FinishReason::Stop);
        assert_eq!(plan.completion_tokens(), 5);
    }

    #[test]
    fn max_tokens_cuts_reasoning_first_then_content() {
        let contract = read_contract(TAIL_WITH_WORDS);
        let mut thinking = settings(3);
        thinking.reasoning_tokens = 2;
        let plan = plan_output(&contract, &thinking, &mut SimRng::new(1));
        assert_eq!(plan.reasoning, vec!["let".to_string(), " me".to_string()]);
        assert_eq!(plan.content_text(), "ANVIL_REQ_1717_00003");
        assert_eq!(plan.finish_reason, FinishReason::Length);
        thinking.max_tokens = 1;
        let starved = plan_output(&contract, &thinking, &mut SimRng::new(1));
        assert!(starved.content.is_empty());
        assert_eq!(starved.completion_tokens(), 1);
    }

    #[test]
    fn a_huge_word_count_costs_only_max_tokens() {
        let contract = read_contract(" Then emit exactly 4000000000 repetitions of the lowercase word code, separated by single spaces.");
        assert_eq!(
            contract.words.as_ref().map(|words| words.count),
            Some(4_000_000_000)
        );
        let plan = plan_output(&contract, &settings(10), &mut SimRng::new(1));
        assert_eq!(plan.content.len(), 10);
        assert_eq!(plan.finish_reason, FinishReason::Length);
        let mut huge = settings(10);
        huge.answer_words = u32::MAX;
        let filler = plan_output(&PromptContract::default(), &huge, &mut SimRng::new(1));
        assert_eq!(
            (filler.content.len(), filler.finish_reason),
            (10, FinishReason::Length)
        );
    }

    #[test]
    fn filler_answers_stop_naturally_and_depend_only_on_the_seed() {
        let contract = read_contract(TAIL_SUMMARY);
        let plan = plan_output(&contract, &settings(1_000), &mut SimRng::new(9));
        let text = plan.content_text();
        assert!(text.starts_with("ANVIL_REQ_-5_00000 "));
        let filler_words = text.split(' ').count() - 1;
        assert!((15..=25).contains(&filler_words), "{filler_words} words");
        assert_eq!(plan.finish_reason, FinishReason::Stop);
        assert_eq!(
            plan,
            plan_output(&contract, &settings(1_000), &mut SimRng::new(9))
        );
        assert_ne!(
            plan,
            plan_output(&contract, &settings(1_000), &mut SimRng::new(10))
        );
    }

    #[test]
    fn marker_faults_produce_wrong_or_foreign_markers() {
        let contract = read_contract(TAIL_WITH_WORDS);
        let mut wrong = settings(64);
        wrong.marker_fault = Some(MarkerFault::Wrong);
        let plan = plan_output(&contract, &wrong, &mut SimRng::new(1));
        assert_eq!(
            plan.content_text(),
            "ANVIL_REQ_1717_00004 code code code code"
        );
        let mut foreign = settings(64);
        foreign.marker_fault = Some(MarkerFault::Foreign);
        let plan = plan_output(&contract, &foreign, &mut SimRng::new(1));
        assert_eq!(
            plan.content_text(),
            "ANVIL_REQ_1717_00003 ANVIL_REQ_1717_00004 code code code code"
        );
        assert_eq!(other_marker("ANVIL_REQ_3_99999"), "ANVIL_REQ_3_00000");
        assert_eq!(other_marker("not a marker"), "ANVIL_REQ_0_99999");
    }

    #[test]
    fn multibyte_text_goes_where_the_contract_leaves_room() {
        let mut multibyte = settings(64);
        multibyte.multibyte = true;
        multibyte.reasoning_tokens = 3;
        let free = plan_output(&PromptContract::default(), &multibyte, &mut SimRng::new(2));
        assert!(free.content_text().chars().any(|c| c.len_utf8() > 1));
        let fixed = plan_output(
            &read_contract(TAIL_WITH_WORDS),
            &multibyte,
            &mut SimRng::new(2),
        );
        assert!(fixed.content_text().is_ascii());
        assert!(fixed.reasoning.concat().chars().any(|c| c.len_utf8() > 1));
    }
}

use std::io::Write as _;
use std::path::Path;

use super::*;
use crate::task::{OutcomeKind, Reply};

/// The first record of MMLU-Pro's test split as its authors publish it (9 options, gold `I`).
const MMLU_PRO_70: &str = r#"{"question_id": 70, "question": "Typical advertising regulatory bodies suggest, for example that adverts must not: encourage _________, cause unnecessary ________ or _____, and must not cause _______ offence.", "answer": "I", "answer_index": 8, "category": "business", "src": "ori_mmlu-business_ethics", "options": ["Safe practices, Fear, Jealousy, Trivial", "Unsafe practices, Distress, Joy, Trivial", "Safe practices, Wants, Jealousy, Trivial", "Safe practices, Distress, Fear, Trivial", "Unsafe practices, Wants, Jealousy, Serious", "Safe practices, Distress, Jealousy, Serious", "Safe practices, Wants, Fear, Serious", "Unsafe practices, Wants, Fear, Trivial", "Unsafe practices, Distress, Fear, Serious"]}"#;

fn read(kind: DatasetKind, text: &str) -> Result<LoadedDataset, DatasetError> {
    load_dataset_bytes(Path::new("test.jsonl"), text.as_bytes(), kind)
}

#[test]
fn mmlu_pro_records_read_with_their_gold_and_nine_options() {
    let loaded = read(DatasetKind::MmluPro, MMLU_PRO_70).expect("reads");
    let question = &loaded.questions[0];
    assert_eq!(question.id, "mmlu-pro-70");
    assert_eq!(question.subject, "business");
    assert_eq!(question.options.len(), 9);
    assert_eq!(question.gold, Gold::Choice(8));
    assert_eq!(question.gold.display(), "I");
}

#[test]
fn a_record_that_does_not_match_its_kind_is_refused_by_line_and_field() {
    let mismatch = MMLU_PRO_70.replace("\"answer_index\": 8", "\"answer_index\": 7");
    let text = format!("{MMLU_PRO_70}\n{mismatch}\n");
    let error = read(DatasetKind::MmluPro, &text)
        .expect_err("refused")
        .to_string();
    assert!(error.contains("line 2"), "{error}");
    assert!(error.contains("`answer_index`"), "{error}");
    let error = read(DatasetKind::Gsm8k, MMLU_PRO_70)
        .expect_err("not gsm8k")
        .to_string();
    assert!(error.contains("line 1, field `answer`"), "{error}");
    let error = read(DatasetKind::Mmlu, "{\"question\": \"q\"}")
        .expect_err("no choices")
        .to_string();
    assert!(error.contains("field `choices`: missing"), "{error}");
    let out_of_range = MMLU_PRO_70
        .replace("\"answer\": \"I\"", "\"answer\": \"J\"")
        .replace("\"answer_index\": 8", "\"answer_index\": 9");
    let error = read(DatasetKind::MmluPro, &out_of_range)
        .expect_err("J is not an option")
        .to_string();
    assert!(error.contains("J is not one of the 9 options"), "{error}");
    let duplicate = format!("{MMLU_PRO_70}\n{MMLU_PRO_70}");
    let error = read(DatasetKind::MmluPro, &duplicate)
        .expect_err("same id twice")
        .to_string();
    assert!(error.contains("line 2, field `id`"), "{error}");
}

#[test]
fn the_hubs_parquet_shape_reads_as_the_authors_jsonl_does() {
    // Written by pyarrow 26 (snappy pages, `options` a list padded with "N/A" to ten, as the
    // hub's shard is): the first question of each category of the bundled sample.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/datasets/mmlu-pro");
    let parquet = load_dataset(&fixtures.join("sample-14.parquet"), DatasetKind::MmluPro)
        .expect("the Parquet sample reads");
    let jsonl = load_dataset(&fixtures.join("sample-280.jsonl"), DatasetKind::MmluPro)
        .expect("the JSONL sample reads");
    assert_eq!(parquet.questions.len(), 14);
    for question in &parquet.questions {
        let same = jsonl
            .questions
            .iter()
            .find(|other| other.id == question.id)
            .unwrap_or_else(|| panic!("{} is in the JSONL sample", question.id));
        assert_eq!(
            (
                &question.subject,
                &question.text,
                &question.options,
                &question.gold
            ),
            (&same.subject, &same.text, &same.options, &same.gold)
        );
    }
}

#[test]
fn gzip_is_read_transparently_and_a_broken_parquet_file_is_refused_with_the_fix() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(MMLU_PRO_70.as_bytes()).expect("write");
    let bytes = encoder.finish().expect("gzip");
    let loaded =
        load_dataset_bytes(Path::new("t.jsonl.gz"), &bytes, DatasetKind::MmluPro).expect("gz");
    assert_eq!(loaded.questions[0].id, "mmlu-pro-70");
    let error = load_dataset_bytes(Path::new("t.parquet"), b"PAR1....", DatasetKind::MmluPro)
        .expect_err("parquet")
        .to_string();
    assert!(
        error.contains("Parquet") && error.contains("JSON Lines"),
        "{error}"
    );
}

#[test]
fn records_that_are_no_questions_are_left_out_with_the_reason() {
    // MMLU-Pro's test split holds five questions with a single option; a CSV header row
    // carried into a JSONL file (as in one packaged MMLU) is no question either.
    let single = r#"{"question_id": 1, "question": "q", "options": ["only"], "answer": "A", "answer_index": 0, "category": "math"}"#;
    let loaded = read(DatasetKind::MmluPro, &format!("{single}\n{MMLU_PRO_70}")).expect("reads");
    assert_eq!(loaded.questions.len(), 1);
    assert_eq!(loaded.left_out.len(), 1);
    assert_eq!(loaded.left_out[0].line, 1);
    assert!(loaded.left_out[0].reason.contains("1 option"));
    let header = r#"{"question": "question", "answer_a": "answer_a", "answer_b": "answer_b", "answer_c": "answer_c", "answer_d": "answer_d", "correct_answer": "answer", "topic": "topic"}"#;
    let row = r#"{"question": "2 + 2?", "answer_a": "3", "answer_b": "4", "answer_c": "5", "answer_d": "6", "correct_answer": "B", "topic": "elementary mathematics"}"#;
    let loaded = read(DatasetKind::Mmlu, &format!("{row}\n{header}")).expect("reads");
    assert_eq!(loaded.questions.len(), 1);
    assert_eq!(loaded.questions[0].gold, Gold::Choice(1));
    assert_eq!(loaded.questions[0].subject, "elementary mathematics");
    assert_eq!(loaded.left_out[0].line, 2);
}

#[test]
fn arc_reads_in_both_published_shapes() {
    let flat = r#"{"id": "Mercury_7175875", "question": "An astronomer observes...", "choices": {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]}, "answerKey": "C"}"#;
    let nested = r#"{"id": "Mercury_1", "question": {"stem": "Which?", "choices": [{"text": "x", "label": "1"}, {"text": "y", "label": "2"}]}, "answerKey": "2"}"#;
    let loaded = read(DatasetKind::Arc, &format!("{flat}\n{nested}")).expect("reads");
    assert_eq!(loaded.questions[0].gold, Gold::Choice(2));
    assert_eq!(loaded.questions[1].gold, Gold::Choice(1));
    assert_eq!(loaded.questions[1].options, ["x", "y"]);
}

#[test]
fn gsm8k_and_math_final_answers_read() {
    // GSM8K's first training problem (Cobbe et al. 2021), its answer line `#### 72`.
    let gsm = r#"{"question": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?", "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"}"#;
    let loaded = read(DatasetKind::Gsm8k, gsm).expect("reads");
    assert_eq!(loaded.questions[0].gold, Gold::Final("72".to_owned()));
    // MMATH's shape: a JSON array, answers wrapped in `$`.
    let mmath = r#"[{"question": "Find r.", "answer": "$\\frac{3}{4}$", "data_source": "CNMO", "data_source_id": 2, "lang": "en", "gid": 47}]"#;
    let loaded = read(DatasetKind::Math, mmath).expect("reads");
    let question = &loaded.questions[0];
    assert_eq!(question.id, "math-47");
    assert_eq!(question.subject, "cnmo");
    let task = question_task(DatasetKind::Math, question, &[], 100);
    let outcome = task
        .check_answer(&Reply::stopped(
            "so r = 0.75.\nThe final answer is \\boxed{0.75}",
        ))
        .expect("graded");
    assert_eq!(outcome.kind, OutcomeKind::Pass, "{}", outcome.detail);
}

#[test]
fn choices_are_read_by_the_strict_rule_then_the_named_fallbacks() {
    // The strict pattern is MMLU-Pro's own (`answer is \(?([A-J])\)?`, compute_accuracy.py);
    // the last match is taken, not the first.
    let cases: [(&str, Option<(&str, &str)>); 18] = [
        // A reply that corrects itself is read at its correction.
        (
            "The answer is (A) because of X. Wait.\n\n**Final Answer:** C",
            Some(("C", "answer_label")),
        ),
        (
            "maybe the answer is (B)... no: \\boxed{D}",
            Some(("D", "bold_or_boxed")),
        ),
        // The pronoun and the article are no answers; an option named as such is.
        ("So the answer is I think B", None),
        ("**Answer:** I'd go with it", None),
        ("Answer: A cell wall holds", None),
        (
            "The correct answer is: **Option B**",
            Some(("B", "answer_is")),
        ),
        ("The answer is (C).", Some(("C", "answer_is"))),
        ("the answer is B", Some(("B", "answer_is"))),
        (
            "Maybe the answer is (A)? No: the answer is **(D)**.",
            Some(("D", "answer_is")),
        ),
        ("**Answer:** (E)", Some(("E", "answer_label"))),
        ("Final answer: J", Some(("J", "answer_label"))),
        ("I choose **G**.", Some(("G", "bold_or_boxed"))),
        ("$\\boxed{H}$", Some(("H", "bold_or_boxed"))),
        ("Reasoning...\n\n(F)\n", Some(("F", "last_line_letter"))),
        ("Reasoning...\nB.", Some(("B", "last_line_letter"))),
        ("A cell divides.\nA good question.", None),
        ("The answer is a bit unclear.", None),
        ("**Question:** what is 2+2?\nIt is four.", None),
    ];
    for (content, expected) in cases {
        let got = extract_choice(content);
        assert_eq!(
            got.as_ref().map(|read| (read.answer.as_str(), read.rule)),
            expected,
            "{content:?}"
        );
    }
}

#[test]
fn final_answers_are_read_boxed_first() {
    let cases: [(&str, Option<(&str, &str)>); 6] = [
        (
            "The final answer is $\\boxed{\\frac{3}{4}}$.",
            Some(("\\frac{3}{4}", "boxed")),
        ),
        (
            "The final answer is 18 dollars",
            Some(("18 dollars", "final_answer_is")),
        ),
        ("work\nAnswer: 42", Some(("42", "answer_label"))),
        ("work\n#### 1,234", Some(("1,234", "gsm8k_hashes"))),
        ("I do not know.", None),
        ("\\boxed{}", None),
    ];
    for (content, expected) in cases {
        let got = extract_final(content);
        assert_eq!(
            got.as_ref().map(|read| (read.answer.as_str(), read.rule)),
            expected,
            "{content:?}"
        );
    }
}

#[test]
fn normalisation_equates_forms_of_one_value_and_nothing_else() {
    let same = [
        ("18", "$18.00$"),
        ("1234", "1,234"),
        ("\\frac{1}{2}", "0.5"),
        ("\\dfrac{3}{4}", "3/4"),
        ("-\\frac{1}{4}", "-0.25"),
        ("\\frac12", "1/2"),
        ("90", "90^\\circ"),
        ("25", "25\\%"),
        ("5", "x = 5"),
        ("\\( 18 \\)", "18"),
        ("\\[\\frac{1}{2}\\]", "0.5"),
        ("(2,3)", "\\left( 2, 3 \\right)"),
        ("\\text{Evelyn}", "Evelyn"),
        ("\\$18", "18"),
    ];
    for (a, b) in same {
        assert_eq!(normalise_final(a), normalise_final(b), "{a} vs {b}");
    }
    let different = [
        ("18", "18.5"),
        ("1/2", "2/1"),
        ("\\sqrt{2}", "2"),
        ("12", "1,2"),
        ("1234", "1, 234"),
    ];
    for (a, b) in different {
        assert_ne!(normalise_final(a), normalise_final(b), "{a} vs {b}");
    }
    // A variable named on both sides must be the same one; named on one side, it agrees.
    assert!(final_answers_agree("x = 5", "5"));
    assert!(final_answers_agree("5", "x=5"));
    assert!(!final_answers_agree(
        "y = -\\frac{47}{8}",
        "x = -\\frac{47}{8}"
    ));
    assert!(final_answers_agree("y = -\\frac{47}{8}", "y=-47/8"));
}

fn questions(per_subject: &[(&str, usize)]) -> Vec<Question> {
    let mut out = Vec::new();
    for (subject, n) in per_subject {
        for index in 0..*n {
            out.push(Question {
                id: format!("{subject}-{index}"),
                subject: (*subject).to_owned(),
                text: format!("{subject} question {index}?"),
                options: vec!["yes".to_owned(), "no".to_owned()],
                gold: Gold::Choice(index % 2),
                explanation: None,
                line: out.len() + 1,
            });
        }
    }
    out
}

#[test]
fn draws_are_stratified_reproducible_and_refuse_what_cannot_be_drawn() {
    let all = questions(&[("law", 30), ("math", 25), ("history", 3)]);
    let drawn = draw_questions(&all, DatasetSampling::PerCategory(20), 7).expect("draws");
    let count = |subject: &str| {
        drawn
            .iter()
            .filter(|index| all[**index].subject == subject)
            .count()
    };
    assert_eq!((count("law"), count("math"), count("history")), (20, 20, 3));
    assert!(drawn.windows(2).all(|pair| pair[0] < pair[1]), "file order");
    assert_eq!(
        drawn,
        draw_questions(&all, DatasetSampling::PerCategory(20), 7).expect("again")
    );
    assert_ne!(
        drawn,
        draw_questions(&all, DatasetSampling::PerCategory(20), 8).expect("other seed")
    );
    // A category's draw does not depend on the others in the file.
    let law_only = questions(&[("law", 30)]);
    let alone = draw_questions(&law_only, DatasetSampling::PerCategory(20), 7).expect("draws");
    let law_ids: Vec<&str> = drawn
        .iter()
        .filter(|index| all[**index].subject == "law")
        .map(|index| all[*index].id.as_str())
        .collect();
    let alone_ids: Vec<&str> = alone
        .iter()
        .map(|index| law_only[*index].id.as_str())
        .collect();
    assert_eq!(law_ids, alone_ids);
    assert_eq!(
        draw_questions(&all, DatasetSampling::Sample(10), 1)
            .expect("sample")
            .len(),
        10
    );
    let error = draw_questions(&all, DatasetSampling::Sample(59), 1)
        .expect_err("too many")
        .to_string();
    assert!(error.contains("58 questions"), "{error}");
    assert_eq!(
        draw_questions(&all, DatasetSampling::All, 0)
            .expect("all")
            .len(),
        58
    );
}

#[test]
fn the_prompt_is_the_authors_instruction_and_holds_every_option() {
    let loaded = read(DatasetKind::MmluPro, MMLU_PRO_70).expect("reads");
    let task = question_task(DatasetKind::MmluPro, &loaded.questions[0], &[], 512);
    let prompt = &task.messages[0].content;
    assert!(prompt.starts_with(
        "The following are multiple choice questions (with answers) about business. Think step \
         by step and then finish your answer with \"the answer is (X)\""
    ));
    assert!(prompt.contains("\nI. Unsafe practices, Distress, Fear, Serious\n"));
    assert!(prompt.ends_with("Answer: Let's think step by step."));
    let (n_checks, failures) = prove_dataset_task(&task);
    assert!(failures.is_empty(), "{failures:?}");
    assert!(n_checks > 10);
}

#[test]
fn examples_come_from_the_same_subject_with_their_worked_answers() {
    let mut examples = questions(&[("law", 2), ("math", 6)]);
    examples[0].explanation = Some("A: Let's think step by step. Contracts bind.".to_owned());
    let asked = &questions(&[("law", 3)])[2];
    let chosen = examples_for(asked, &examples, DEFAULT_SHOTS);
    assert_eq!(chosen.len(), 2);
    let prompt = question_prompt(asked, &chosen);
    assert!(
        prompt.contains("Answer: Let's think step by step. Contracts bind.\nThe answer is (A).")
    );
    assert!(
        prompt.contains("law question 1?\nOptions:\nA. yes\nB. no\nAnswer: The answer is (B).")
    );
    let none_of_subject = questions(&[("art", 1)]);
    assert_eq!(examples_for(&none_of_subject[0], &examples, 3).len(), 3);
}

#[test]
fn the_self_check_refuses_a_gold_that_is_no_option() {
    let mut question = questions(&[("law", 1)]).remove(0);
    question.gold = Gold::Choice(3);
    let task = question_task(DatasetKind::Custom, &question, &[], 64);
    let (_, failures) = prove_dataset_task(&task);
    assert!(
        failures
            .iter()
            .any(|failure| failure.contains("not an option")),
        "{failures:?}"
    );
}

#[test]
fn grading_keeps_cut_off_and_no_answer_apart_from_wrong() {
    let question = questions(&[("law", 1)]).remove(0);
    let task = question_task(DatasetKind::Custom, &question, &[], 64);
    let grade = |content: &str, finish: &str| {
        let mut reply = Reply::stopped(content);
        reply.finish_reason = Some(finish.to_owned());
        task.check_answer(&reply).expect("graded")
    };
    let pass = grade("**Question:** is it?\nthe answer is (A)", "stop");
    assert_eq!(
        (pass.kind, pass.rule.as_deref()),
        (OutcomeKind::Pass, Some("answer_is"))
    );
    assert_eq!(grade("the answer is (B)", "stop").kind, OutcomeKind::Wrong);
    let cut = grade("the answer is (A", "length");
    assert_eq!(cut.kind, OutcomeKind::CutOff);
    let none = grade("I am not sure.", "stop");
    assert_eq!(
        (none.kind, none.detail.as_str()),
        (OutcomeKind::NoAnswer, "no_answer")
    );
    let out_of_range = grade("the answer is (E)", "stop");
    assert!(out_of_range.detail.contains("not one of the 2 options"));
}

#[test]
fn gpqa_reads_its_csv_with_an_option_order_fixed_by_the_record() {
    // GPQA's column names (Rein et al. 2023, gpqa_diamond.csv); a quoted field spans lines.
    let csv = "Record ID,Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3,High-level domain\n\
               rec1,\"Which is heavier,\nlead or tin?\",lead,tin,both,neither,Chemistry\n\
               rec2,What is 2+2?,4,3,5,22,Physics\n";
    let loaded = read(DatasetKind::Gpqa, csv).expect("reads");
    assert_eq!(loaded.questions.len(), 2);
    let first = &loaded.questions[0];
    assert_eq!(first.id, "gpqa-rec1");
    assert_eq!(first.subject, "chemistry");
    assert_eq!(first.text, "Which is heavier,\nlead or tin?");
    let Gold::Choice(gold) = first.gold else {
        panic!("a choice");
    };
    assert_eq!(first.options[gold], "lead");
    assert_eq!(
        read(DatasetKind::Gpqa, csv).expect("again").questions,
        loaded.questions
    );
    // The right answer does not always stand first.
    let golds: Vec<usize> = (0..40)
        .map(|n| {
            let row = format!("Record ID,Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3\nr{n},q?,a,b,c,d\n");
            match read(DatasetKind::Gpqa, &row).expect("reads").questions[0].gold {
                Gold::Choice(index) => index,
                _ => usize::MAX,
            }
        })
        .collect();
    assert!((0..4).all(|index| golds.contains(&index)), "{golds:?}");
    // The same columns as JSON Lines (a hub copy) read alike.
    let jsonl = r#"{"Record ID": "rec2", "Question": "What is 2+2?", "Correct Answer": "4", "Incorrect Answer 1": "3", "Incorrect Answer 2": "5", "Incorrect Answer 3": "22", "High-level domain": "Physics"}"#;
    assert_eq!(
        read(DatasetKind::Gpqa, jsonl).expect("reads").questions[0],
        Question {
            line: 1,
            ..loaded.questions[1].clone()
        }
    );
    let missing = "Record ID,Question,Correct Answer\nr1,q?,a\n";
    let error = read(DatasetKind::Gpqa, missing)
        .expect_err("no wrong answers")
        .to_string();
    assert!(
        error.contains("line 2, field `Incorrect Answer 1`"),
        "{error}"
    );
}

//! `question` (several structured questions) and `ask_user` (one question): ask the person
//! and return their answers.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::session::{AskOutcome, Question as Q, QuestionOption};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, TypedTool, tool};

use super::{SESSION, host};

const QUESTION: &str = "Ask the person one or more questions and wait for the answers. Use it when a choice \
    is theirs to make (which approach, which file, what name) instead of guessing. Give 2-4 options per question \
    when the answers can be foreseen (each with a short description); leave `options` empty for a free answer.";
const ASK_USER: &str = "Ask the person one question and wait for the answer. `options` are the choices \
    (omit for a free answer); `default` is used when nobody can answer.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct QuestionArgs {
    /// The questions (1-4).
    questions: Vec<Q>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AskArgs {
    /// The question.
    question: String,
    /// The choices, as short labels.
    #[serde(default)]
    options: Vec<String>,
    /// The answer to use when nobody can answer (no interactive client).
    #[serde(default)]
    default: Option<String>,
}

fn render(questions: &[Q], answers: &[Vec<String>]) -> String {
    questions
        .iter()
        .zip(answers.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(q, a)| {
            let answer = match a {
                Some(labels) if !labels.is_empty() => labels.join(", "),
                _ => "(no answer)".to_owned(),
            };
            format!("Q: {}\nA: {answer}", q.question)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

async fn ask<T: TypedTool>(ctx: &ToolContext, questions: Vec<Q>) -> Result<Vec<Vec<String>>, ToolError> {
    let host = host::<T>(ctx)?;
    match host.ask(questions).await {
        AskOutcome::Answered(answers) => Ok(answers),
        AskOutcome::Cancelled => Err(ToolError::new(
            "the person dismissed the question; continue with what you know, or stop and say what you need",
        )
        .with("cancelled", true)),
        AskOutcome::Unavailable(why) => Err(ToolError::new(format!(
            "nobody can be asked here ({why}); decide with what you know and say which assumption you made"
        ))
        .with("unavailable", true)),
    }
}

tool!(pub(crate) Question(QuestionArgs) = Decl::new("question", ToolGroup::Interact, QUESTION)
    .aliases(&["AskUserQuestion", "ask_questions"])
    .keywords(&["ask", "clarify", "choose", "person", "user"])
    .needs(SESSION), question);

async fn question(args: QuestionArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if args.questions.is_empty() || args.questions.len() > 4 {
        return Err(ToolError::new(format!("ask 1 to 4 questions at a time (got {})", args.questions.len())));
    }
    if let Some(q) = args.questions.iter().find(|q| q.question.trim().is_empty()) {
        return Err(ToolError::new(format!("a question is empty (header `{}`)", q.header)));
    }
    let answers = ask::<Question>(&ctx, args.questions.clone()).await?;
    Ok(ToolOutput::new("The person answered", render(&args.questions, &answers))
        .with("answers", serde_json::to_value(&answers).unwrap_or_default()))
}

tool!(pub(crate) AskUser(AskArgs) = Decl::new("ask_user", ToolGroup::Interact, ASK_USER)
    .aliases(&["ask", "ask_followup_question"])
    .keywords(&["question", "clarify", "confirm", "person", "user"])
    .needs(SESSION), ask_user);

async fn ask_user(args: AskArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if args.question.trim().is_empty() {
        return Err(ToolError::new("`question` is empty"));
    }
    let question = Q {
        question: args.question.clone(),
        header: String::new(),
        options: args.options.iter().map(|l| QuestionOption { label: l.clone(), description: String::new() }).collect(),
        multi_select: false,
    };
    let answer = match ask::<AskUser>(&ctx, vec![question.clone()]).await {
        Ok(answers) => answers.into_iter().next().unwrap_or_default().join(", "),
        Err(err) if err.metadata.contains_key("unavailable") => match args.default {
            Some(default) => {
                return Ok(ToolOutput::new(
                    "Used the default answer",
                    format!("Q: {}\nA: {default} (the default: nobody could be asked)", args.question),
                )
                .with("defaulted", true));
            }
            None => return Err(err),
        },
        Err(err) => return Err(err),
    };
    Ok(ToolOutput::new("The person answered", format!("Q: {}\nA: {answer}", args.question)).with("answer", answer))
}

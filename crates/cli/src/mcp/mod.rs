//! `trainbench mcp`: the studio as an MCP (Model Context Protocol) server
//! over stdio, for an agent's client. Each tool calls what the command of
//! the same job calls and returns the document its `--json` prints (as
//! structured content, with a line of text); a refusal is a tool error
//! carrying the CLI's `{"error": {code, field, message}}`. Runs and searches
//! go through one queue on its own thread ([`queue`]), one at a time. The
//! protocol is the `rmcp` SDK's; stdout carries it, so nothing here prints
//! there (progress and notes go to stderr, as the commands write them).

mod args;
mod queue;
mod start;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::json;
use trainbench_app::settings::DatabaseLocation;

use crate::error::CliError;
use crate::open::open_workspace;

/// What every tool call needs: the database and the run queue.
struct Context {
    at: DatabaseLocation,
    queue: queue::Queue,
}

/// The server: the tools of [`tools::TOOLS`] over one [`Context`].
#[derive(Clone)]
struct Studio {
    context: Arc<Context>,
}

impl Studio {
    /// A tool's answer: its JSON document as structured content, the text a
    /// person reads first; a refusal as a tool error with the CLI's error
    /// document.
    fn answer(outcome: Result<args::Answer, CliError>) -> CallToolResult {
        match outcome {
            Ok(a) => {
                // The text first, then the document as text too, for a
                // client that does not read structured content.
                let mut r = CallToolResult::structured(a.json);
                r.content.insert(0, ContentBlock::text(a.text));
                r
            }
            Err(e) => {
                let (v, words) = match e {
                    CliError::BadInput { field, message } => (
                        json!({"error": {"code": "bad_input", "field": field, "message": message}}),
                        message,
                    ),
                    CliError::Failed(message) | CliError::Unfinished(message) => (
                        json!({"error": {"code": "failed", "message": message}}),
                        message,
                    ),
                };
                let mut r = CallToolResult::structured_error(v);
                r.content.insert(0, ContentBlock::text(words));
                r
            }
        }
    }
}

impl ServerHandler for Studio {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("trainbench", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "TrainBench Studio: measured deep-learning training benchmarks stored in SQLite. \
                 Read stored runs (runs, run, compare, explain, query), the published record \
                 (published, project), the model catalogue (models, describe); start a run or a \
                 search (start_run, start_tune) in the studio's queue, one at a time. \
                 docs/mcp.md describes every tool.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::listed()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "name = {} is not a tool of this server: expected one of {}",
                    request.name,
                    tools::names().join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let context = Arc::clone(&self.context);
        // The studio's calls block (SQLite, a worker building a model, a
        // run waited for): off the protocol's thread.
        let work = tokio::task::spawn_blocking(move || tools::call(tool, &context, &arguments));
        let outcome = match work.await {
            Ok(outcome) => outcome,
            Err(e) => Err(CliError::Failed(format!(
                "the tool {} stopped: {e}",
                tool.name
            ))),
        };
        Ok(Studio::answer(outcome).into())
    }
}

/// Serves the tools on stdin and stdout until the client closes stdin;
/// then runs still queued or training are cancelled (stored as cancelled).
pub fn serve(at: DatabaseLocation) -> Result<ExitCode, CliError> {
    // Opened once the way every command opens it (runs a stopped studio
    // left running marked interrupted); the tools open it beside this.
    drop(open_workspace(&at.path)?);
    let db: PathBuf = at.path.clone();
    let context = Arc::new(Context {
        at,
        queue: queue::Queue::start(db)?,
    });
    let runtime = trainbench_app::execute::runtime()?;
    let studio = Studio {
        context: Arc::clone(&context),
    };
    let served = runtime.block_on(async move {
        let running = studio
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::Failed(format!("the MCP session did not start: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| CliError::Failed(format!("the MCP session ended badly: {e}")))
    });
    context.queue.stop();
    served.map(|_| ExitCode::SUCCESS)
}

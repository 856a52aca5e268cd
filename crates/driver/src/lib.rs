//! The salsa database that runs Sspur's front end as incremental queries.
//!
//! Query graph (all tracked on one [`SourceFile`] input):
//! `parse` → `item_tree` (types and signatures, no positions) and
//! `functions` (one [`FnItem`] per function, its AST stored relative to the
//! function's start) → `lower_fn` (one body) → `program` (all bodies, with
//! positions made absolute again) → `analysis` (ownership); `warnings`
//! collects each body's warnings once the file has no errors.
//!
//! `lower_fn` reads only its function's relative AST and the item tree, so
//! editing one function's body leaves every other function's lowered body
//! unrecomputed (tested in `tests/incremental.rs`).
#![forbid(unsafe_code)]

mod rebase;

use std::sync::{Arc, Mutex};

use ir::{Body, BodySourceMap, FnId, ItemTree, Program, RawIdx};
use syntax::{ast, Diagnostic, Span};

pub use check::{Severity, Warning};

/// The source text of one program file.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

/// The database trait the queries run against: salsa plus a log of which
/// bodies were lowered (what the incrementality test reads).
#[salsa::db]
pub trait Db: salsa::Database {
    fn record_lowering(&self, name: &str);
}

#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
    lowered: Arc<Mutex<Vec<String>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn record_lowering(&self, name: &str) {
        if let Ok(mut log) = self.lowered.lock() {
            log.push(name.to_string());
        }
    }
}

impl Database {
    /// Names of the functions lowered since the last call, in order.
    pub fn take_lowering_log(&self) -> Vec<String> {
        self.lowered
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }
}

/// A shared value compared by identity: for query results that are
/// expensive to compare and always new when recomputed.
#[derive(Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}
impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl<T> Eq for Shared<T> {}
impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub ast: Arc<ast::SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parsed {
    let (ast, diagnostics) = syntax::parse(file.text(db));
    Parsed {
        ast: Arc::new(ast),
        diagnostics,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Items {
    tree: Arc<ItemTree>,
    fn_spans: Vec<Span>,
    diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
fn items(db: &dyn Db, file: SourceFile) -> Items {
    let (tree, fn_spans, diagnostics) = check::lower_items(&parse(db, file).ast);
    Items {
        tree: Arc::new(tree),
        fn_spans,
        diagnostics,
    }
}

/// Types and signatures without positions: unchanged (and so not
/// invalidating its readers) when only function bodies are edited.
#[salsa::tracked(returns(ref))]
pub fn item_tree(db: &dyn Db, file: SourceFile) -> Arc<ItemTree> {
    items(db, file).tree.clone()
}

/// The item tree's names, for every body to look up (built once; see
/// `check::ItemIndex`). Recomputed only when the item tree changes.
#[salsa::tracked(returns(ref))]
pub fn item_index(db: &dyn Db, file: SourceFile) -> Arc<check::ItemIndex> {
    Arc::new(check::ItemIndex::new(item_tree(db, file)))
}

/// One function of the file. Its AST is stored relative to `offset`.
#[salsa::tracked]
pub struct FnItem<'db> {
    pub file: SourceFile,
    #[returns(copy)]
    pub index: u32,
    #[tracked]
    #[returns(ref)]
    pub ast: Arc<ast::FnDef>,
    #[tracked]
    #[returns(copy)]
    pub offset: u32,
}

#[salsa::tracked(returns(ref))]
pub fn functions(db: &dyn Db, file: SourceFile) -> Vec<FnItem<'_>> {
    let parsed = parse(db, file);
    let mut out = Vec::new();
    for item in &parsed.ast.items {
        if let ast::Item::Fn(def) = item {
            let offset = def.span.start;
            let mut rel = def.clone();
            rebase::fn_def(&mut rel, -(offset as i64));
            out.push(FnItem::new(
                db,
                file,
                out.len() as u32,
                Arc::new(rel),
                offset,
            ));
        }
    }
    out
}

/// A lowered function with positions relative to the function's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweredFn {
    pub body: Arc<Body>,
    pub source_map: Arc<BodySourceMap>,
    pub diagnostics: Vec<Diagnostic>,
    pub warnings: Vec<check::Warning>,
}

#[salsa::tracked(returns(ref))]
pub fn lower_fn<'db>(db: &'db dyn Db, f: FnItem<'db>) -> LoweredFn {
    let def = f.ast(db);
    db.record_lowering(&def.name.text);
    let tree = item_tree(db, *f.file(db));
    let id = FnId::from_raw(RawIdx::from_u32(f.index(db)));
    let index = item_index(db, *f.file(db));
    let lowered = check::lower_body(tree, index, id, def);
    LoweredFn {
        body: Arc::new(lowered.body),
        source_map: Arc::new(lowered.source_map),
        diagnostics: lowered.diagnostics,
        warnings: lowered.warnings,
    }
}

/// Every diagnostic of the file, sorted by position. Syntax errors stop
/// checking (a body that failed to parse would only add noise).
#[salsa::tracked(returns(ref))]
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let parsed = parse(db, file);
    let mut diags = parsed.diagnostics.clone();
    if diags.is_empty() {
        diags.extend(items(db, file).diagnostics.iter().cloned());
        for f in functions(db, file) {
            let offset = f.offset(db) as i64;
            for d in &lower_fn(db, *f).diagnostics {
                diags.push(shift_diagnostic(d, offset));
            }
        }
    }
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    diags.dedup();
    diags
}

/// Every warning of the file, sorted by position; none while the file has
/// errors (a body that failed to check says nothing reliable about its
/// uses).
#[salsa::tracked(returns(ref))]
pub fn warnings(db: &dyn Db, file: SourceFile) -> Vec<check::Warning> {
    if !diagnostics(db, file).is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in functions(db, file) {
        let offset = f.offset(db) as i64;
        out.extend(lower_fn(db, *f).warnings.iter().map(|w| w.shift(offset)));
    }
    out.sort_by_key(|w| (w.span.start, w.span.end));
    out
}

fn shift_diagnostic(d: &Diagnostic, delta: i64) -> Diagnostic {
    let mut d = d.clone();
    d.span = d.span.shift(delta);
    for (s, _) in &mut d.labels {
        *s = s.shift(delta);
    }
    d
}

/// The checked program, or None when there are diagnostics.
#[salsa::tracked(returns(ref))]
pub fn program(db: &dyn Db, file: SourceFile) -> Option<Arc<Program>> {
    if !diagnostics(db, file).is_empty() {
        return None;
    }
    let items = items(db, file);
    let mut bodies = Vec::new();
    let mut source_maps = Vec::new();
    for f in functions(db, file) {
        let lowered = lower_fn(db, *f);
        bodies.push(lowered.body.clone());
        source_maps.push(Arc::new(lowered.source_map.shift(f.offset(db) as i64)));
    }
    Some(Arc::new(Program {
        items: items.tree.clone(),
        bodies,
        source_maps,
        fn_spans: items.fn_spans.clone(),
        line_starts: Arc::new(ir::line_starts(file.text(db))),
    }))
}

/// The ownership analysis of the checked program.
#[salsa::tracked(returns(ref))]
pub fn analysis(db: &dyn Db, file: SourceFile) -> Option<Shared<ownership::Analysis>> {
    program(db, file)
        .as_ref()
        .map(|p| Shared(Arc::new(ownership::analyze(p))))
}

/// Renders diagnostics as `path:line:col: error: ...` with the source line
/// and a caret.
pub fn render(db: &dyn Db, file: SourceFile, diags: &[Diagnostic]) -> String {
    check::render_diagnostics(file.path(db), file.text(db), diags)
}

/// Renders warnings like diagnostics, as `severity`.
pub fn render_warnings(
    db: &dyn Db,
    file: SourceFile,
    warnings: &[check::Warning],
    severity: check::Severity,
) -> String {
    check::render_warnings(file.path(db), file.text(db), warnings, severity)
}

/// The program to run: without any drop when `gc` (`SSPUR_MEM=gc`: no
/// drop is produced at all), otherwise the one the ownership pass made.
pub fn runnable_program(db: &dyn Db, file: SourceFile, gc: bool) -> Option<Arc<Program>> {
    if gc {
        program(db, file).clone()
    } else {
        analysis(db, file).as_ref().map(|a| a.program.clone())
    }
}

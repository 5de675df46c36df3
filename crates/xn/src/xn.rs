//! [`Xn`]: the state (file systems, roots, free map, registry, will-free
//! list, flush epochs), registration, and the read-only views.

use alloc::vec::Vec;

use oxok_abi::xn::{BLOCK_SIZE, DATA, MAX_TEMPLATES, rights};

use crate::AclMemo;
use crate::registry::{Entry, Registry};
use crate::rerun::OwnsRun;
use crate::template::Acl;
use crate::{Creds, Frame, FreeMap, Owned, OwnsError, Refusal, RowSet, Spans, Template, VerifyError};

/// The kernel's access to frame contents (its direct map; a `HashMap` in
/// tests). XN only ever names frames the wrapper gave it.
pub trait Frames {
    /// The bytes of `frame`, if it is one.
    fn read(&self, frame: Frame) -> Option<&[u8; BLOCK_SIZE]>;
    /// The bytes of `frame`, writable, if it is one.
    fn write(&mut self, frame: Frame) -> Option<&mut [u8; BLOCK_SIZE]>;
}

/// A registered file system, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FsId(pub u32);

/// A registered root: the block, its file system and template number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    /// File system.
    pub fs: FsId,
    /// Block.
    pub block: u64,
    /// Template number (`>= 1`).
    pub ty: u32,
}

/// What the registry says about one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockView {
    /// File system.
    pub fs: FsId,
    /// `DATA` or a template number.
    pub ty: u32,
    /// The owning metadata block (`None` for a root).
    pub parent: Option<u64>,
    /// The frame caching it.
    pub frame: Option<Frame>,
    /// [`oxok_abi::xn::state`].
    pub state: u8,
    /// Freed, waiting on the will-free list.
    pub will_free: bool,
}

/// XN's whole state for one disk.
#[derive(Clone, Debug)]
pub struct Xn {
    pub(crate) map: FreeMap,
    pub(crate) fss: Vec<Vec<Template>>,
    pub(crate) roots: Vec<Root>,
    pub(crate) reg: Registry,
    pub(crate) will_free: Vec<u64>,
    /// Where the next [`reap`](Xn::reap) starts looking.
    pub(crate) reap_cursor: usize,
    /// Epoch of write completions now (flush_begin closes it).
    pub(crate) epoch: u64,
    /// Every epoch up to this one is durable.
    pub(crate) durable: u64,
    pub(crate) next_gen: u64,
    /// `owns` of the content the last changes proposed for up to
    /// [`MEMOS`] metadata blocks, one each ([`change_check`](Xn::change_check)):
    /// a run of changes to one block runs `owns` once per change, not twice,
    /// and not at all for a change to bytes `owns` never read (a file's
    /// size); and a write of a changed block (`write_check`) finds its
    /// `owns` here while it is among the last [`MEMOS`] changed.
    pub(crate) memo: Memos,
    /// Blocks with a completed write not yet known durable (duplicates
    /// allowed): the only entries whose exposed state a flush changes.
    pub(crate) undurable: Vec<u64>,
    /// `undurable` could not grow: the next flush marks every row.
    pub(crate) undurable_lost: bool,
}

/// One metadata block's content, its `owns` result and the words that run
/// read. Valid for any block with the same bytes in those words, so it is
/// used only after comparing them; nothing needs to invalidate it.
#[derive(Clone, Debug)]
pub(crate) struct OwnsMemo {
    block: u64,
    fs: u32,
    ty: u32,
    content: [u8; BLOCK_SIZE],
    owned: Owned,
    /// The run that said `owned`, kept for the block's next change.
    run: OwnsRun,
}

impl OwnsMemo {
    /// Whether its `owns` is that of metadata `block` (entry `e`) holding
    /// `content`: the same block and template, the same bytes where the
    /// remembered run read.
    fn holds(&self, block: u64, e: &Entry, content: &[u8; BLOCK_SIZE]) -> bool {
        (self.block, self.fs, self.ty) == (block, e.fs, e.ty) && self.run.reads().same_on(&self.content, content)
    }
}

/// Template `ty` of file system `fs` among `fss`.
fn template_in(fss: &[Vec<Template>], fs: u32, ty: u32) -> Result<&Template, Refusal> {
    let list = fss.get(fs as usize).ok_or(Refusal::BadFs)?;
    let i = (ty as usize).checked_sub(1).ok_or(Refusal::BadFs)?;
    list.get(i).ok_or(Refusal::BadFs)
}

/// The refusal for an `owns` of metadata `block` that failed with `e`.
fn refusal(block: u64, e: OwnsError) -> Refusal {
    match e {
        OwnsError::Fault(f) => Refusal::UdfFault(block, f),
        OwnsError::Set(s) => Refusal::BadOwns(block, s),
    }
}

/// Metadata blocks whose `owns` [`Memos`] remembers at once.
pub const MEMOS: usize = 16;

/// Up to [`MEMOS`] [`OwnsMemo`]s, at most one per block; when full, a new
/// one replaces the next in turn. Each is used only after
/// [`OwnsMemo::holds`] compared it, so which ones are kept decides only
/// how often `owns` runs, never what it says.
#[derive(Clone, Debug, Default)]
pub(crate) struct Memos {
    memos: Vec<OwnsMemo>,
    /// Each memo's block, in the same order: what a lookup scans (a memo
    /// is over 4 KiB, so a scan of the memos themselves would touch a page
    /// each).
    blocks: Vec<u64>,
    next: usize,
}

impl Memos {
    /// Where the memo of `block` is, if one is kept and holds for
    /// `content`.
    fn position(&self, block: u64, e: &Entry, content: &[u8; BLOCK_SIZE]) -> Option<usize> {
        let i = self.blocks.iter().position(|&b| b == block)?;
        self.memos.get(i).filter(|m| m.holds(block, e, content)).map(|_| i)
    }

    /// The memo of `block`, if one is kept and holds for `content`.
    fn find(&self, block: u64, e: &Entry, content: &[u8; BLOCK_SIZE]) -> Option<&OwnsMemo> {
        self.position(block, e, content).and_then(|i| self.memos.get(i))
    }

    /// Forgets the memo at `i`.
    fn forget(&mut self, i: usize) {
        if i < self.memos.len() && i < self.blocks.len() {
            self.memos.swap_remove(i);
            self.blocks.swap_remove(i);
        }
    }

    /// Keeps the memo of `block` (entry `e`) holding `content`: over the
    /// one of the same block if there is one, else in a free place, else
    /// over the next in turn. Room for all of them is taken once,
    /// fallibly: without it the memo is simply not kept.
    fn keep(&mut self, block: u64, e: &Entry, content: &[u8; BLOCK_SIZE], owned: Owned, run: OwnsRun) {
        let i = match self.blocks.iter().position(|&b| b == block) {
            Some(i) => i,
            None if self.memos.len() < MEMOS => {
                if (self.memos.capacity() < MEMOS && self.memos.try_reserve_exact(MEMOS).is_err())
                    || (self.blocks.capacity() < MEMOS && self.blocks.try_reserve_exact(MEMOS).is_err())
                {
                    return;
                }
                self.blocks.push(block);
                self.memos.push(OwnsMemo { block, fs: e.fs, ty: e.ty, content: *content, owned, run });
                return;
            }
            None => {
                self.next = (self.next + 1) % MEMOS;
                self.next
            }
        };
        if let (Some(m), Some(b)) = (self.memos.get_mut(i), self.blocks.get_mut(i)) {
            *b = block;
            (m.block, m.fs, m.ty, m.owned, m.run) = (block, e.fs, e.ty, owned, run);
            m.content.copy_from_slice(content);
        }
    }
}

impl Xn {
    /// XN for a disk of `nblocks` blocks, all free.
    pub fn new(nblocks: u64) -> Result<Xn, Refusal> {
        Ok(Xn {
            map: FreeMap::new(nblocks)?,
            fss: Vec::new(),
            roots: Vec::new(),
            reg: Registry::default(),
            will_free: Vec::new(),
            reap_cursor: 0,
            epoch: 1,
            durable: 0,
            next_gen: 1,
            memo: Memos::default(),
            undurable: Vec::new(),
            undurable_lost: false,
        })
    }

    /// Registers a file system's templates (each in the layout of
    /// [`oxok_abi::xn`]; template `n` is `templates[n - 1]`). Needs no
    /// privilege; templates never change once registered.
    pub fn register_fs(&mut self, templates: &[&[u8]]) -> Result<FsId, VerifyError> {
        if templates.is_empty() || templates.len() > MAX_TEMPLATES {
            return Err(VerifyError::BadTemplate);
        }
        let mut list = Vec::new();
        list.try_reserve_exact(templates.len()).map_err(|_| VerifyError::NoMemory)?;
        for t in templates {
            list.push(Template::parse(t)?);
        }
        let id = u32::try_from(self.fss.len()).map_err(|_| VerifyError::NoMemory)?;
        self.fss.try_reserve(1).map_err(|_| VerifyError::NoMemory)?;
        self.fss.push(list);
        Ok(FsId(id))
    }

    /// Makes the free `block` a root of `fs` of template `ty`, cached in
    /// `frame` with `content` (copied there). The content may own nothing
    /// yet; the root is tainted until written and flushed. The kernel
    /// wrapper persists the root in its catalogue only once the root is no
    /// longer tainted ([`Xn::is_tainted`]), so recovery never reads an
    /// uninitialised root. Adding roots needs no privilege; the wrapper
    /// charges the block to the caller's account.
    pub fn add_root(
        &mut self,
        mem: &mut impl Frames,
        fs: FsId,
        block: u64,
        ty: u32,
        frame: Frame,
        content: &[u8; BLOCK_SIZE],
    ) -> Result<(), Refusal> {
        let t = self.template(fs.0, ty)?;
        if block >= self.map.nblocks() {
            return Err(Refusal::OutOfRange(block));
        }
        if !self.map.is_free(block) {
            return Err(Refusal::NotFree(block));
        }
        if !self.owns_of(t, fs.0, block, content)?.is_empty() {
            return Err(Refusal::OwnsMismatch(block));
        }
        self.reg.reserve(1)?;
        self.roots.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
        mem.write(frame).ok_or(Refusal::NotBound(block))?.copy_from_slice(content);
        let mut e = Entry::new(fs.0, ty, self.new_generation(), None, 0);
        e.frame = Some(frame);
        e.dirty = true;
        self.reg.insert(block, e)?;
        self.map.set(block, true);
        self.roots.push(Root { fs, block, ty });
        Ok(())
    }

    /// The registry entry of `block`, as exposed.
    pub fn block(&self, block: u64) -> Option<BlockView> {
        self.reg.get(block).map(|e| self.view(e))
    }

    fn view(&self, e: &Entry) -> BlockView {
        BlockView {
            fs: FsId(e.fs),
            ty: e.ty,
            parent: e.parent.map(|(p, _)| p),
            frame: e.frame,
            state: e.state(self.durable),
            will_free: e.freed.is_some(),
        }
    }

    /// Every registered block, in order.
    pub fn blocks(&self) -> impl Iterator<Item = (u64, BlockView)> + '_ {
        self.reg.iter().map(|(b, e)| (b, self.view(e)))
    }

    /// Registered blocks, cached blocks, and registered blocks per file
    /// system (index: file-system number; numbers past `per_fs` or
    /// [`MAX_FS`](oxok_abi::xn::MAX_FS) uncounted): kept as the registry
    /// changes, so this costs nothing per entry.
    pub fn counts(&self, per_fs: &mut [u64]) -> (u64, u64) {
        let t = self.reg.tally();
        for (n, c) in per_fs.iter_mut().zip(t.per_fs.iter()) {
            *n = *c;
        }
        (self.reg.len() as u64, t.cached)
    }

    /// Registered blocks.
    pub fn registered(&self) -> usize {
        self.reg.len()
    }

    /// The registered block row `row` of the exposed table shows (each
    /// entry keeps its row while it is registered; a free row shows none).
    pub fn row(&self, row: usize) -> Option<(u64, BlockView)> {
        self.reg.at_row(row).map(|(b, e)| (b, self.view(e)))
    }

    /// Rows of the exposed table handed out so far (at most
    /// [`XN_ROWS_MAX`](oxok_abi::xn::XN_ROWS_MAX)): every registered block
    /// with a row has it below this.
    pub fn rows(&self) -> usize {
        self.reg.rows()
    }

    /// The rows whose view may have changed since the last call (an
    /// exposed copy rewrites only these; a row freed since shows none);
    /// the first call after [`new`](Xn::new) covers all.
    pub fn take_changed(&mut self) -> RowSet {
        self.reg.take_changed()
    }

    /// The free map's words changed since the last call (all at the
    /// first): an exposed copy rewrites only these.
    pub fn take_changed_map(&mut self) -> Spans {
        self.map.take_changed()
    }

    /// The free map.
    pub fn free_map(&self) -> &FreeMap {
        &self.map
    }

    /// Blocks freed in core that still wait for no on-disk pointer to remain.
    pub fn will_free(&self) -> &[u64] {
        &self.will_free
    }

    /// The registered roots.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The last flush epoch known durable. Whether a registered block is
    /// tainted changes only when this moves (a flush completed) or when
    /// the block itself is allocated or freed; roots are never freed, so
    /// which roots are tainted stays as it is while this and the number of
    /// roots do.
    pub fn durable_epoch(&self) -> u64 {
        self.durable
    }

    /// Blocks allocated to `fs` (a view; walks the registry).
    pub fn usage(&self, fs: FsId) -> u64 {
        self.reg.iter().filter(|(_, e)| e.fs == fs.0).count() as u64
    }

    /// Whether `block` is allocated and not durably initialised.
    pub fn is_tainted(&self, block: u64) -> bool {
        self.reg.get(block).is_some_and(|e| e.durable_seq(self.durable) == 0)
    }

    /// Whether `block` is a live data block that holds nothing yet: never
    /// written since it was allocated (no write issued, none in flight) and
    /// not cached. The disk still has a former owner's bytes there, so the
    /// wrapper never reads it: its content is zeros, and the first read,
    /// bind or write of it caches a zeroed frame ([`insert`](Xn::insert)).
    /// Data blocks are allocated so (a copy's destination never needs a
    /// frame); metadata blocks are cached at once.
    pub fn unwritten(&self, block: u64) -> bool {
        self.live(block)
            .is_ok_and(|e| !e.is_meta() && e.frame.is_none() && e.issued == 0 && !e.in_flight && e.pins == 0)
    }

    /// Runs `size` over the cached metadata `block`.
    pub fn size(&self, mem: &impl Frames, block: u64) -> Result<u64, Refusal> {
        let (e, content) = self.cached_meta(mem, block)?;
        let t = self.template(e.fs, e.ty)?;
        t.size(content).map_err(|f| Refusal::UdfFault(block, f))
    }

    /// Runs `owns` over the cached metadata `block`.
    pub fn owns(&self, mem: &impl Frames, block: u64) -> Result<Owned, Refusal> {
        let (e, content) = self.cached_meta(mem, block)?;
        self.owns_known(&e, block, content)
    }

    /// `owns` of metadata `block` (entry `e`) holding `content`: the memo's
    /// when it holds the same bytes where its run read, else a run.
    pub(crate) fn owns_known(&self, e: &Entry, block: u64, content: &[u8; BLOCK_SIZE]) -> Result<Owned, Refusal> {
        match self.memo.find(block, e, content) {
            Some(m) => m.owned.try_clone().map_err(|_| Refusal::NoMemory),
            None => self.owns_of(self.template(e.fs, e.ty)?, e.fs, block, content),
        }
    }

    // ---- helpers shared by the operations ----

    pub(crate) fn new_generation(&mut self) -> u64 {
        self.next_gen += 1;
        self.next_gen
    }

    /// Template `ty` of file system `fs`.
    pub(crate) fn template(&self, fs: u32, ty: u32) -> Result<&Template, Refusal> {
        template_in(&self.fss, fs, ty)
    }

    pub(crate) fn types(&self, fs: u32) -> u32 {
        self.fss.get(fs as usize).map_or(0, |l| l.len() as u32)
    }

    pub(crate) fn owns_of(
        &self,
        t: &Template,
        fs: u32,
        block: u64,
        content: &[u8; BLOCK_SIZE],
    ) -> Result<Owned, Refusal> {
        t.owns(content, self.map.nblocks(), self.types(fs)).map_err(|e| refusal(block, e))
    }

    /// A live (not freed) entry.
    pub(crate) fn live(&self, block: u64) -> Result<&Entry, Refusal> {
        if block >= self.map.nblocks() {
            return Err(Refusal::OutOfRange(block));
        }
        let e = self.reg.get(block).ok_or(Refusal::NotAllocated(block))?;
        if e.freed.is_some() {
            return Err(Refusal::WillFree(block));
        }
        Ok(e)
    }

    /// A live metadata block and its cached content.
    pub(crate) fn cached_meta<'m>(
        &self,
        mem: &'m impl Frames,
        block: u64,
    ) -> Result<(Entry, &'m [u8; BLOCK_SIZE]), Refusal> {
        let e = *self.live(block)?;
        if e.ty == DATA {
            return Err(Refusal::NotMetadata(block));
        }
        let content = e.frame.and_then(|f| mem.read(f)).ok_or(Refusal::NotBound(block))?;
        Ok((e, content))
    }

    /// The grants over `block` (whose live entry is `e`): its parent's
    /// `acl` (its own for a root).
    fn acl_over(&self, mem: &impl Frames, block: u64, e: &Entry) -> Result<Acl, Refusal> {
        let holder = e.parent.map_or(block, |(p, _)| p);
        let (he, content) = self.cached_meta(mem, holder)?;
        self.template(he.fs, he.ty)?.acl(content).map_err(|f| Refusal::UdfFault(holder, f))
    }

    /// Refuses unless the caller holds `need` over `block`.
    pub(crate) fn check_rights(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        block: u64,
        need: u32,
    ) -> Result<(), Refusal> {
        self.check_rights_live(mem, creds, block, self.live(block)?, need, None)
    }

    /// [`check_rights`](Xn::check_rights) for `block` whose live entry `e`
    /// the caller already found; with `memo` ([`AclMemo`]: valid while no
    /// metadata changes) the grants of each holder (and its allocation
    /// generation) are found by running `acl` once while the memo lives.
    pub(crate) fn check_rights_live(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        block: u64,
        e: &Entry,
        need: u32,
        memo: Option<&mut AclMemo>,
    ) -> Result<(), Refusal> {
        let allowed = match memo {
            None => self.acl_over(mem, block, e)?.allows(creds, need),
            Some(memo) => {
                let (holder, generation) = e.parent.unwrap_or((block, e.generation));
                match memo.get(holder, generation) {
                    Some(acl) => acl.allows(creds, need),
                    None => {
                        let acl = self.acl_over(mem, block, e)?;
                        let allowed = acl.allows(creds, need);
                        memo.put(holder, generation, acl);
                        allowed
                    }
                }
            }
        };
        if allowed { Ok(()) } else { Err(Refusal::Denied(block)) }
    }

    /// The common checks of allocate, free and modify: `meta` is a live,
    /// cached metadata block not in flight, and the caller may write it.
    /// Returns (entry, owns before, owns after).
    ///
    /// `owns` runs over the old content only when the memo does not hold
    /// it, and over the new only when the two differ in a word the run over
    /// the old read, and then only from where they differ until it meets
    /// the old run again ([`crate::rerun`]); the new content's result
    /// becomes the memo.
    pub(crate) fn change_check(
        &mut self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        meta: u64,
        new: &[u8; BLOCK_SIZE],
    ) -> Result<(Entry, Owned, Owned), Refusal> {
        let (e, old) = self.cached_meta(mem, meta)?;
        if e.in_flight {
            return Err(Refusal::InFlight(meta));
        }
        self.check_rights(mem, creds, meta, rights::WRITE)?;
        let (nblocks, types) = (self.map.nblocks(), self.types(e.fs));
        let t = template_in(&self.fss, e.fs, e.ty)?;
        let no_memory = |_| Refusal::NoMemory;
        let Some(i) = self.memo.position(meta, &e, old) else {
            let (before, mut run) = t.owns_run(old, nblocks, types).map_err(|x| refusal(meta, x))?;
            let after = match t.owns_again(&mut run, old, new, nblocks, types).map_err(|x| refusal(meta, x))?.0 {
                Some(after) => after,
                None => before.try_clone().map_err(no_memory)?,
            };
            self.memo.keep(meta, &e, new, after.try_clone().map_err(no_memory)?, run);
            return Ok((e, before, after));
        };
        let m = &mut self.memo.memos[i];
        let before = m.owned.try_clone().map_err(no_memory)?;
        // On a refusal the run is as it was, and the memo with it.
        let Some(after) = t.owns_again(&mut m.run, old, new, nblocks, types).map_err(|x| refusal(meta, x))?.0 else {
            // The same steps over either: the memo holds for `new` too.
            m.content.copy_from_slice(new);
            return Ok((e, before.try_clone().map_err(no_memory)?, before));
        };
        match after.try_clone() {
            Ok(kept) => {
                m.owned = kept;
                m.content.copy_from_slice(new);
                Ok((e, before, after))
            }
            Err(_) => {
                // The run is over `new` now, the rest over `old`.
                self.memo.forget(i);
                Err(Refusal::NoMemory)
            }
        }
    }
}

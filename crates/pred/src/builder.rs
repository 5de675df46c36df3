//! [`Builder`]: an assembler for predicates, usable from `no_std` user code.

use oxok_abi::pred::{INSN_SIZE, MAX_INSNS};

use crate::{Cmp, Code, Insn, Operand, Size, VerifyError, verify};

/// Assembles a predicate into a fixed buffer, one instruction per call.
///
/// Calls chain on `&mut Builder`, so both a one-liner and a loop work:
///
/// ```
/// use oxok_pred::{Builder, verify};
///
/// const HEAD: u64 = 0x1000;
/// // Wake when the word at HEAD differs from parameter 0 (the last value
/// // seen), or when parameter 1 is switched on and the byte at
/// // (parameter 2 + 4) has bit 0 set.
/// let code = Builder::new()
///     .load_u64(HEAD).ne_param(0)
///     .or()
///     .load_param(1).ne_imm(0).load_at(oxok_pred::Size::U8, 2, 4).test_imm(1)
///     .build()?;
/// let program = verify(code.as_bytes())?;
/// let mut memory = |addr: u64, _size: u8| if addr == HEAD { Some(7) } else { None };
/// assert_eq!(program.eval(&[7, 0, 0, 0, 0, 0, 0, 0], &mut memory), Ok(false));
/// assert_eq!(program.eval(&[6, 0, 0, 0, 0, 0, 0, 0], &mut memory), Ok(true));
/// # Ok::<(), oxok_pred::VerifyError>(())
/// ```
///
/// Nothing is checked until [`build`](Builder::build), which runs the
/// verifier, so a builder never produces bytes the kernel would refuse.
/// Pushing more than [`MAX_INSNS`] instructions is remembered and makes
/// `build` fail with [`VerifyError::TooLong`].
#[derive(Clone, Debug, Default)]
pub struct Builder {
    /// The instructions so far.
    code: Code,
    /// Instructions pushed, including any that did not fit.
    pushed: usize,
}

/// Generates the comparison shorthands: `$gen(o)`, `$imm(v)`, `$param(p)`.
macro_rules! comparisons {
    ($($cmp:ident: $gen:ident $imm:ident $param:ident, $pre:literal $post:literal;)*) => {$(
        #[doc = concat!("Term `", $pre, "x", $post, "` for operand `x`.")]
        pub fn $gen(&mut self, x: Operand) -> &mut Builder {
            self.cmp(Cmp::$cmp, x)
        }

        #[doc = concat!("Term `", $pre, "imm", $post, "`.")]
        pub fn $imm(&mut self, imm: u64) -> &mut Builder {
            self.cmp(Cmp::$cmp, Operand::Imm(imm))
        }

        #[doc = concat!("Term `", $pre, "parameter[p]", $post, "`.")]
        pub fn $param(&mut self, p: u8) -> &mut Builder {
            self.cmp(Cmp::$cmp, Operand::Param(p))
        }
    )*};
}

impl Builder {
    /// An empty builder.
    pub const fn new() -> Builder {
        Builder { code: Code::new(), pushed: 0 }
    }

    /// Appends any instruction.
    pub fn push(&mut self, insn: Insn) -> &mut Builder {
        self.code.push(insn.encode());
        self.pushed = self.pushed.saturating_add(1);
        self
    }

    /// Instructions pushed so far (may exceed [`MAX_INSNS`]).
    pub fn len(&self) -> usize {
        self.pushed
    }

    /// Whether nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Forgets everything pushed.
    pub fn clear(&mut self) -> &mut Builder {
        *self = Builder::new();
        self
    }

    /// `ld x`: `v = x`. Each clause starts with one.
    pub fn load(&mut self, x: Operand) -> &mut Builder {
        self.push(Insn::Load(x))
    }

    /// `ld u8 [addr]`.
    pub fn load_u8(&mut self, addr: u64) -> &mut Builder {
        self.load(Operand::mem(Size::U8, addr))
    }

    /// `ld u16 [addr]`.
    pub fn load_u16(&mut self, addr: u64) -> &mut Builder {
        self.load(Operand::mem(Size::U16, addr))
    }

    /// `ld u32 [addr]`.
    pub fn load_u32(&mut self, addr: u64) -> &mut Builder {
        self.load(Operand::mem(Size::U32, addr))
    }

    /// `ld u64 [addr]`.
    pub fn load_u64(&mut self, addr: u64) -> &mut Builder {
        self.load(Operand::mem(Size::U64, addr))
    }

    /// `ld size [p<param>+offset]`: the word at `parameter[param] + offset`.
    pub fn load_at(&mut self, size: Size, param: u8, offset: u64) -> &mut Builder {
        self.load(Operand::at_param(size, param, offset))
    }

    /// `ld p<param>`: the parameter itself (e.g. an on/off switch).
    pub fn load_param(&mut self, param: u8) -> &mut Builder {
        self.load(Operand::Param(param))
    }

    /// `and x`: `v = v & x`.
    pub fn and(&mut self, x: Operand) -> &mut Builder {
        self.push(Insn::And(x))
    }

    /// `and imm`: keeps the bits of `mask`.
    pub fn and_imm(&mut self, mask: u64) -> &mut Builder {
        self.and(Operand::Imm(mask))
    }

    /// `sub x`: `v = v - x`, wrapping.
    pub fn sub(&mut self, x: Operand) -> &mut Builder {
        self.push(Insn::Sub(x))
    }

    /// A term `cmp(v, x)`.
    pub fn cmp(&mut self, cmp: Cmp, x: Operand) -> &mut Builder {
        self.push(Insn::Cmp(cmp, x))
    }

    comparisons! {
        Eq: eq eq_imm eq_param, "v == " "";
        Ne: ne ne_imm ne_param, "v != " "";
        Lt: lt lt_imm lt_param, "v < " "";
        Le: le le_imm le_param, "v <= " "";
        Gt: gt gt_imm gt_param, "v > " "";
        Ge: ge ge_imm ge_param, "v >= " "";
        Test: test test_imm test_param, "v & " " != 0";
    }

    /// `or`: ends the current clause and starts the next.
    pub fn or(&mut self) -> &mut Builder {
        self.push(Insn::Or)
    }

    /// The bytes, after the verifier has accepted them.
    pub fn build(&self) -> Result<Code, VerifyError> {
        if self.pushed > MAX_INSNS {
            return Err(VerifyError::TooLong { len: self.pushed.saturating_mul(INSN_SIZE) });
        }
        verify(self.code.as_bytes())?;
        Ok(self.code.clone())
    }

    /// The bytes as pushed, unverified (for building hostile test input).
    pub fn bytes(&self) -> &[u8] {
        self.code.as_bytes()
    }
}

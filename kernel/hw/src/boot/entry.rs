//! The machine-level entry: Multiboot2 header, PVH ELF note, and the one
//! 32-bit → 64-bit trampoline both protocols enter.
//!
//! Both boot protocols enter `_start32` in 32-bit protected mode with paging
//! off. Multiboot2 passes `EAX = 0x36d76289` and `EBX` → its information
//! structure; PVH passes `EBX` → `hvm_start_info` (whose first word is the
//! magic 0x336ec578). The trampoline keeps both registers, builds boot page
//! tables that identity-map the first 4 GiB and map them again at the
//! direct-map base and (first GiB) at the kernel's higher-half base, enters
//! long mode, zeroes `.bss`, switches to the kernel stack and calls
//! `kernel_main(eax, ebx)`; [`super::BootInfo::from_entry`] tells the
//! protocols apart.

use core::arch::global_asm;

global_asm!(
    r#"
    /* ---- Multiboot2 header (must lie in the first 32 KiB of the file) ---- */
    .section .multiboot2, "a"
    .balign 8
mb2_header:
    .long 0xe85250d6                 /* magic */
    .long 0                          /* architecture: i386 protected mode */
    .long mb2_header_end - mb2_header
    .long -(0xe85250d6 + (mb2_header_end - mb2_header))
    /* module alignment tag: page-align modules */
    .balign 8
    .short 6
    .short 0
    .long 8
    /* end tag */
    .balign 8
    .short 0
    .short 0
    .long 8
mb2_header_end:

    /* ---- PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) ---- */
    .section .note.Xen, "a", @note
    .balign 4
    .long 4                          /* name size */
    .long 8                          /* descriptor size */
    .long 18                         /* XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .balign 4
    .quad _start32
    .balign 4

    /* ---- boot page tables and stack, identity-mapped ---- */
    .section .boot.bss, "aw", @nobits
    .balign 4096
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4096 * 4       /* 4 GiB in 2 MiB pages */
boot_stack:     .skip 4096
boot_stack_top:

    /* ---- the 32-bit trampoline ---- */
    .section .boot.text, "ax"
    .code32
    .global _start32
_start32:
    cli
    cld
    mov %eax, %edi                   /* protocol magic (Multiboot2) */
    mov %ebx, %esi                   /* protocol information pointer */
    mov $boot_stack_top, %esp

    /* zero the seven boot page tables */
    mov %edi, %ebp
    mov $boot_pml4, %edi
    xor %eax, %eax
    mov $(7 * 4096 / 4), %ecx
    rep stosl
    mov %ebp, %edi

    /* PML4[0] (identity) and PML4[256] (direct map) share one PDPT */
    mov $boot_pdpt_low, %eax
    or $0x3, %eax
    mov %eax, boot_pml4
    mov %eax, boot_pml4 + 256 * 8
    /* PML4[511] → PDPT whose entry 510 maps the kernel at -2 GiB */
    mov $boot_pdpt_high, %eax
    or $0x3, %eax
    mov %eax, boot_pml4 + 511 * 8

    mov $boot_pd, %eax
    or $0x3, %eax
    mov %eax, boot_pdpt_high + 510 * 8
    mov %eax, boot_pdpt_low
    add $4096, %eax
    mov %eax, boot_pdpt_low + 8
    add $4096, %eax
    mov %eax, boot_pdpt_low + 16
    add $4096, %eax
    mov %eax, boot_pdpt_low + 24

    /* 2048 large pages: entry i maps i * 2 MiB, present + writable + PS */
    mov $boot_pd, %ebx
    xor %ecx, %ecx
1:  mov %ecx, %eax
    shl $21, %eax
    or $0x83, %eax
    mov %eax, (%ebx, %ecx, 8)
    inc %ecx
    cmp $2048, %ecx
    jb 1b

    /* PAE on, CR3, EFER.LME + NXE, paging + write-protect on */
    mov %cr4, %eax
    or $(1 << 5), %eax
    mov %eax, %cr4
    mov $boot_pml4, %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx
    rdmsr
    or $((1 << 8) | (1 << 11)), %eax
    wrmsr
    mov %cr0, %eax
    or $((1 << 31) | (1 << 16) | 1), %eax
    mov %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $start64_low

    .code64
start64_low:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %ax, %ax
    mov %ax, %fs
    mov %ax, %gs
    movabs $kernel_entry_high, %rax
    jmp *%rax

    .section .boot.rodata, "a"
    .balign 16
boot_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF         /* 0x08: 64-bit code */
    .quad 0x00CF92000000FFFF         /* 0x10: data */
boot_gdt_end:
    .balign 4
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .long boot_gdt

    /* ---- higher half ---- */
    .section .text.kernel_entry, "ax"
    .global kernel_entry_high
kernel_entry_high:
    mov %edi, %r12d                  /* zero-extends */
    mov %esi, %r13d
    lea __bss_start(%rip), %rdi
    lea __bss_end(%rip), %rcx
    sub %rdi, %rcx
    shr $3, %rcx
    xor %eax, %eax
    rep stosq
    lea {stack}+{stack_size}(%rip), %rsp
    xor %ebp, %ebp
    mov %r12, %rdi
    mov %r13, %rsi
    call kernel_main
2:  hlt
    jmp 2b
    "#,
    stack = sym crate::arch::stack::KERNEL_STACK,
    stack_size = const crate::arch::stack::GUARD_SIZE + crate::arch::stack::KERNEL_STACK_SIZE,
    options(att_syntax)
);

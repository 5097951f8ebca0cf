// Internal: immediate literals of the Atlas ISA text (docs/isa.md §2), shared by the parser
// and the printer so that what one writes the other reads back to the same bits.
#ifndef HG_ISA_TEXT_IMM_H
#define HG_ISA_TEXT_IMM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Longest immediate token the parser accepts (longer literals are rejected, not truncated).
#define HG_TEXT_IMM_MAX 127

// Parses tok[0..n) (not NUL-terminated) as an immediate of dtype. On success stores the
// canonical bits (the value's bits in that type, zero above its width) and returns true; on
// failure writes "<what was wrong>, expected <what>" into why and returns false.
bool hg_text_parse_imm(const char* tok, size_t n, int dtype, uint64_t* bits, char* why,
                       size_t why_len);

// Writes the canonical literal of bits as an immediate of dtype into buf (NUL-terminated,
// truncated to len). Bits above the type's width are ignored. An invalid dtype gives
// "<imm 0x...>". Returns buf.
char* hg_text_format_imm(uint64_t bits, int dtype, char* buf, size_t len);

// True if name[0..n) is reserved in the text (a type name or one of global shared const true
// false inf nan _): such names cannot be declared because an operand could not name them.
bool hg_text_is_keyword(const char* name, size_t n);

#endif

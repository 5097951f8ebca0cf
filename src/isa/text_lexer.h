// Internal: the line-oriented tokenizer of the Atlas ISA text (docs/isa.md §2). It never reads
// past the given length (the text need not be NUL-terminated) and rejects bytes that cannot
// appear outside comments.
#ifndef HG_ISA_TEXT_LEXER_H
#define HG_ISA_TEXT_LEXER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hg_tok_kind {
    HG_TOK_END = 0,    // end of the line (or a comment)
    HG_TOK_WORD,       // a run of printable characters other than the punctuation below
    HG_TOK_PUNCT,      // one of , : [ ]
    HG_TOK_BAD,        // a byte that may not appear outside comments
} hg_tok_kind;

typedef struct hg_tok {
    hg_tok_kind kind;
    const char* s;     // points into the text (not NUL-terminated)
    size_t n;
    uint32_t col;      // 1-based column of the first byte
} hg_tok;

typedef struct hg_lexer {
    const char* text;
    size_t len;
    size_t line_start;  // offset of the current line's first byte
    size_t line_end;    // offset of its '\n' (or len)
    size_t cur;         // next byte to read within the line
    uint32_t line;      // 1-based line number of the current line
    bool started;
} hg_lexer;

void hg_lexer_init(hg_lexer* lx, const char* text, size_t len);
// Moves to the next line; false at the end of the text.
bool hg_lexer_next_line(hg_lexer* lx);
// The next token of the current line (HG_TOK_END repeatedly at its end).
hg_tok hg_lexer_next(hg_lexer* lx);
// The next token without consuming it.
hg_tok hg_lexer_peek(hg_lexer* lx);

static inline bool hg_tok_is(const hg_tok* t, const char* word) {
    size_t i = 0;
    for (; word[i]; i++)
        if (i >= t->n || t->s[i] != word[i]) return false;
    return i == t->n;
}

#endif

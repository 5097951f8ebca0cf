// Tokenizer of the Atlas ISA text: one line at a time; comments (// ; #) run to the end of the
// line and may hold any byte; outside comments only printable ASCII and blanks are allowed.
#include "isa/text_lexer.h"
#include <string.h>

void hg_lexer_init(hg_lexer* lx, const char* text, size_t len) {
    memset(lx, 0, sizeof *lx);
    lx->text = text;
    lx->len = text ? len : 0;
}

bool hg_lexer_next_line(hg_lexer* lx) {
    size_t start;
    if (!lx->started) {
        lx->started = true;
        start = 0;
        lx->line = 1;
    } else {
        if (lx->line_end >= lx->len) return false;
        start = lx->line_end + 1;
        if (start >= lx->len) return false;  // the text ends with '\n': no further line
        lx->line++;
    }
    const char* nl = start < lx->len ? memchr(lx->text + start, '\n', lx->len - start) : NULL;
    lx->line_start = start;
    lx->line_end = nl ? (size_t)(nl - lx->text) : lx->len;
    lx->cur = start;
    return true;
}

static bool is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static bool is_punct(unsigned char c) { return c == ',' || c == ':' || c == '[' || c == ']'; }
static bool is_word_char(unsigned char c) { return c > 0x20 && c < 0x7F && !is_punct(c); }

// A comment starts at ';', '#' or "//".
static bool comment_at(const hg_lexer* lx, size_t i) {
    unsigned char c = (unsigned char)lx->text[i];
    if (c == ';' || c == '#') return true;
    return c == '/' && i + 1 < lx->line_end && lx->text[i + 1] == '/';
}

hg_tok hg_lexer_next(hg_lexer* lx) {
    hg_tok t;
    memset(&t, 0, sizeof t);
    while (lx->cur < lx->line_end && is_blank((unsigned char)lx->text[lx->cur])) lx->cur++;
    t.col = (uint32_t)(lx->cur - lx->line_start + 1);
    t.s = lx->text + lx->cur;
    if (lx->cur >= lx->line_end || comment_at(lx, lx->cur)) {
        t.kind = HG_TOK_END;
        lx->cur = lx->line_end;  // the rest of the line is a comment
        return t;
    }
    unsigned char c = (unsigned char)lx->text[lx->cur];
    if (is_punct(c)) {
        t.kind = HG_TOK_PUNCT;
        t.n = 1;
        lx->cur++;
        return t;
    }
    if (!is_word_char(c)) {
        t.kind = HG_TOK_BAD;
        t.n = 1;
        return t;  // not consumed: the parser stops at the first bad byte
    }
    size_t i = lx->cur;
    while (i < lx->line_end && is_word_char((unsigned char)lx->text[i]) && !comment_at(lx, i)) i++;
    t.kind = HG_TOK_WORD;
    t.n = i - lx->cur;
    lx->cur = i;
    return t;
}

hg_tok hg_lexer_peek(hg_lexer* lx) {
    size_t save = lx->cur;
    hg_tok t = hg_lexer_next(lx);
    lx->cur = save;
    return t;
}

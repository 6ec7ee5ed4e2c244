/* A C++ tokenizer that knows just enough to skip what a scan over HIP source
 * must skip: comments, line splices, string and character literals (encoding
 * prefixes and raw strings included) and preprocessor directives. It does not
 * preprocess: a directive comes back as one token, whole, for the caller to
 * skip or look into. Used by the parameter parser, the kernel scanner and the
 * host backend's source rewriter. */
#ifndef HKC_CPP_LEXER_H
#define HKC_CPP_LEXER_H

#include <stddef.h>

typedef enum hkc_tok_kind {
    HKC_TOK_EOF,
    HKC_TOK_IDENT,
    HKC_TOK_NUM,
    HKC_TOK_STR,       /* "..." with any prefix (u8, L, R"d(...)d", ...) */
    HKC_TOK_CHAR,      /* '...' with any prefix */
    HKC_TOK_PUNCT,     /* one character, or "::" */
    HKC_TOK_DIRECTIVE, /* '#' at the start of a line up to the newline that ends it */
} hkc_tok_kind;

typedef struct hkc_tok {
    hkc_tok_kind kind;
    const char *p; /* into the lexed text */
    size_t n;
    int line;      /* 1-based, of the token's first character */
} hkc_tok;

/* The lexer's whole state: copy it to look ahead and come back. */
typedef struct hkc_lexer {
    const char *p, *end;
    int line;
    int bol;   /* only whitespace since the last newline */
    int in_pp; /* inside a directive: its newline is the end */
} hkc_lexer;

/* Lexes s[0..n), which need not be NUL-terminated. */
void hkc_lex_init(hkc_lexer *lx, const char *s, size_t n);
/* Lexes the tokens inside a directive token (after its '#'); lines count
 * from the directive's. */
void hkc_lex_init_directive(hkc_lexer *lx, const hkc_tok *directive);
/* The next token; HKC_TOK_EOF at the end, and again on every later call. */
void hkc_lex_next(hkc_lexer *lx, hkc_tok *t);

int hkc_tok_is(const hkc_tok *t, const char *s);
int hkc_tok_punct(const hkc_tok *t, char c);
/* Whether s is a whole C identifier. */
int hkc_is_identifier(const char *s);

/* A text's tokens, directives left out, ending with one HKC_TOK_EOF. */
typedef struct hkc_tokvec {
    hkc_tok *v;
    int n;
    int cap;
} hkc_tokvec;

/* Called on each directive that hkc_tokenize leaves out. */
typedef void hkc_directive_fn(const hkc_tok *directive, void *ctx);

/* Tokenizes s[0..n) into out (free out->v). on_directive may be NULL.
 * Returns 0 or HK_ENOMEM. */
int hkc_tokenize(const char *s, size_t n, hkc_directive_fn *on_directive, void *ctx,
                 hkc_tokvec *out);

#endif

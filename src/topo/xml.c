#include "topo/xml.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* ---------------------------------------------------------------- arena */

/* Every node, attribute and string of a document lives in a chain of blocks,
 * so that freeing a document (or abandoning a half-built one after an error)
 * is one loop, whatever the shape of the tree. */
#define SC_XML_BLOCK_BYTES ((size_t)64 << 10)
#define SC_XML_ALIGN ((size_t)16)

typedef struct sc_xml_block {
  struct sc_xml_block *next;
  size_t used;
  size_t size;
  _Alignas(16) unsigned char data[];
} sc_xml_block_t;

struct sc_xml_doc {
  sc_xml_node_t *root;
  sc_xml_block_t *blocks;
};

static void *sc_xml_alloc(sc_xml_doc_t *doc, size_t bytes) {
  size_t need = (bytes + SC_XML_ALIGN - 1) & ~(SC_XML_ALIGN - 1);
  sc_xml_block_t *b = doc->blocks;
  if (b == NULL || b->size - b->used < need) {
    size_t size = need > SC_XML_BLOCK_BYTES ? need : SC_XML_BLOCK_BYTES;
    b = malloc(sizeof(*b) + size);
    if (b == NULL)
      return NULL;
    b->next = doc->blocks;
    b->used = 0;
    b->size = size;
    doc->blocks = b;
  }
  void *p = b->data + b->used;
  b->used += need;
  memset(p, 0, bytes);
  return p;
}

void sc_xml_free(sc_xml_doc_t *doc) {
  if (doc == NULL)
    return;
  sc_xml_block_t *b = doc->blocks;
  while (b != NULL) {
    sc_xml_block_t *next = b->next;
    free(b);
    b = next;
  }
  free(doc);
}

/* ---------------------------------------------------------------- parser state */

typedef struct sc_xml_parser {
  const char *p;   /* next byte to read */
  const char *end; /* one past the last byte */
  int line;        /* line of *p, from 1 */
  const char *name;
  sc_xml_doc_t *doc;
  int depth;    /* open elements */
  int elements; /* elements seen */
} sc_xml_parser_t;

static sc_result_t sc_xml_fail(const sc_xml_parser_t *ps, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static sc_result_t sc_xml_fail(const sc_xml_parser_t *ps, int line, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s:%d: %s", ps->name, line, what);
}

static sc_result_t sc_xml_no_memory(const sc_xml_parser_t *ps) {
  return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "%s:%d: out of memory while reading XML",
                  ps->name, ps->line);
}

/* Moves forward n bytes, counting the line breaks passed. */
static void sc_xml_advance(sc_xml_parser_t *ps, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ps->p[i] == '\n')
      ps->line++;
  ps->p += n;
}

static bool sc_xml_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Skips white space; true when there was some. */
static bool sc_xml_skip_space(sc_xml_parser_t *ps) {
  const char *start = ps->p;
  while (ps->p < ps->end && sc_xml_is_space(*ps->p)) {
    if (*ps->p == '\n')
      ps->line++;
    ps->p++;
  }
  return ps->p != start;
}

static bool sc_xml_starts(const sc_xml_parser_t *ps, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lit, n) == 0;
}

/* First occurrence of lit at or after `from`, NULL if none. */
static const char *sc_xml_search(const char *from, const char *end, const char *lit) {
  size_t n = strlen(lit);
  for (const char *q = from; (size_t)(end - q) >= n; q++)
    if (*q == lit[0] && memcmp(q, lit, n) == 0)
      return q;
  return NULL;
}

/* How the next byte reads in an error sentence. */
static const char *sc_xml_describe(const sc_xml_parser_t *ps, char *buf, size_t len) {
  if (ps->p >= ps->end)
    return "the end of the file";
  unsigned char c = (unsigned char)*ps->p;
  if (c == '\n')
    return "a line break";
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, len, "'%c'", c);
  else
    snprintf(buf, len, "byte 0x%02x", c);
  return buf;
}

/* ASCII letters, '_' and ':' start a name; UTF-8 bytes are let through so
 * that non-English names do not read as errors. */
static bool sc_xml_name_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}

static bool sc_xml_name_char(unsigned char c) {
  return sc_xml_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* Length of the name at ps->p (0 when none starts there). Names hold no line
 * breaks, so the line count is unaffected. */
static size_t sc_xml_name_length(const sc_xml_parser_t *ps) {
  const char *q = ps->p;
  if (q >= ps->end || !sc_xml_name_start((unsigned char)*q))
    return 0;
  while (q < ps->end && sc_xml_name_char((unsigned char)*q))
    q++;
  return (size_t)(q - ps->p);
}

static char *sc_xml_copy(sc_xml_doc_t *doc, const char *s, size_t n) {
  char *copy = sc_xml_alloc(doc, n + 1);
  if (copy != NULL) {
    memcpy(copy, s, n);
    copy[n] = '\0';
  }
  return copy;
}

/* ---------------------------------------------------------------- attribute values */

static size_t sc_xml_utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* Reads "#65" or "#x41" (the text between '&' and ';') into a code point. */
static bool sc_xml_char_ref(const char *s, size_t n, uint32_t *cp) {
  if (n < 2 || s[0] != '#')
    return false;
  bool hex = s[1] == 'x';
  size_t i = hex ? 2 : 1;
  if (i == n)
    return false;
  uint32_t v = 0;
  for (; i < n; i++) {
    char c = s[i];
    uint32_t d;
    if (c >= '0' && c <= '9')
      d = (uint32_t)(c - '0');
    else if (hex && c >= 'a' && c <= 'f')
      d = (uint32_t)(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F')
      d = (uint32_t)(c - 'A' + 10);
    else
      return false;
    v = v * (hex ? 16 : 10) + d;
    if (v > 0x10ffff)
      return false;
  }
  if (v == 0 || (v >= 0xd800 && v <= 0xdfff))
    return false;
  *cp = v;
  return true;
}

/* Decodes raw[0..n) (an attribute value between its quotes) into out, which
 * has room for n + 1 bytes: every reference is at least as long as what it
 * stands for. */
static sc_result_t sc_xml_decode_value(const sc_xml_parser_t *ps, int line, const char *attr,
                                       const char *raw, size_t n, char *out) {
  static const struct {
    const char *name;
    char c;
  } named[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (raw[i] != '&') {
      out[o++] = raw[i];
      continue;
    }
    const char *semi = memchr(raw + i, ';', n - i);
    size_t len = semi == NULL ? 0 : (size_t)(semi - (raw + i + 1));
    if (semi == NULL || len == 0 || len > 10)
      return sc_xml_fail(ps, line,
                         "'&' in the value of attribute '%s' does not start an entity "
                         "(write '&amp;' for a literal '&')",
                         attr);
    const char *ent = raw + i + 1;
    bool known = false;
    for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
      if (strlen(named[k].name) == len && memcmp(named[k].name, ent, len) == 0) {
        out[o++] = named[k].c;
        known = true;
      }
    }
    uint32_t cp;
    if (!known && sc_xml_char_ref(ent, len, &cp)) {
      o += sc_xml_utf8_encode(cp, out + o);
      known = true;
    }
    if (!known)
      return sc_xml_fail(ps, line, "unknown entity '&%.*s;' in the value of attribute '%s'",
                         (int)len, ent, attr);
    i += len + 1;
  }
  out[o] = '\0';
  return SYMCOMM_OK;
}

/* Reads a quoted value at ps->p (which is the quote). */
static sc_result_t sc_xml_parse_value(sc_xml_parser_t *ps, const char *attr, const char *tag,
                                      int line, const char **value) {
  char quote = *ps->p;
  const char *start = ps->p + 1;
  const char *q = start;
  while (q < ps->end && *q != quote) {
    /* '<' is not allowed in a value; meeting one almost always means the
     * closing quote was forgotten and the next tag was swallowed. */
    if (*q == '<')
      return sc_xml_fail(ps, line,
                         "unterminated value of attribute '%s' of <%s>: '<' before the closing %c",
                         attr, tag, quote);
    q++;
  }
  if (q >= ps->end)
    return sc_xml_fail(ps, line,
                       "unterminated value of attribute '%s' of <%s>: no closing %c before the "
                       "end of the file",
                       attr, tag, quote);
  size_t n = (size_t)(q - start);
  char *out = sc_xml_alloc(ps->doc, n + 1);
  if (out == NULL)
    return sc_xml_no_memory(ps);
  SC_CHECK(sc_xml_decode_value(ps, line, attr, start, n, out));
  sc_xml_advance(ps, n + 2);
  *value = out;
  return SYMCOMM_OK;
}

/* ---------------------------------------------------------------- tags */

static sc_result_t sc_xml_parse_attributes(sc_xml_parser_t *ps, sc_xml_node_t *node, int tag_line,
                                           bool *self_closing) {
  sc_xml_attr_t *last = NULL;
  int count = 0;
  char d[16];
  for (;;) {
    bool spaced = sc_xml_skip_space(ps);
    if (ps->p >= ps->end)
      return sc_xml_fail(ps, tag_line, "tag <%s> is not terminated: the file ends inside it",
                         node->name);
    if (*ps->p == '>') {
      ps->p++;
      *self_closing = false;
      return SYMCOMM_OK;
    }
    if (*ps->p == '/') {
      ps->p++;
      if (ps->p < ps->end && *ps->p == '>') {
        ps->p++;
        *self_closing = true;
        return SYMCOMM_OK;
      }
      return sc_xml_fail(ps, ps->line, "'/' in tag <%s> is not followed by '>' (found %s)",
                         node->name, sc_xml_describe(ps, d, sizeof(d)));
    }
    size_t n = sc_xml_name_length(ps);
    if (n == 0)
      return sc_xml_fail(ps, ps->line, "unexpected %s in tag <%s>",
                         sc_xml_describe(ps, d, sizeof(d)), node->name);
    if (!spaced)
      return sc_xml_fail(ps, ps->line,
                         "attribute '%.*s' of <%s> is not separated from what "
                         "precedes it by a space",
                         (int)n, ps->p, node->name);
    int line = ps->line;
    if (++count > SC_XML_MAX_ATTRIBUTES)
      return sc_xml_fail(ps, line, "<%s> has more than %d attributes", node->name,
                         SC_XML_MAX_ATTRIBUTES);
    sc_xml_attr_t *attr = sc_xml_alloc(ps->doc, sizeof(*attr));
    char *name = attr == NULL ? NULL : sc_xml_copy(ps->doc, ps->p, n);
    if (name == NULL)
      return sc_xml_no_memory(ps);
    ps->p += n;
    attr->name = name;
    attr->line = line;
    sc_xml_skip_space(ps);
    if (ps->p >= ps->end || *ps->p != '=')
      return sc_xml_fail(ps, line, "attribute '%s' of <%s> has no '=' (found %s)", name, node->name,
                         sc_xml_describe(ps, d, sizeof(d)));
    ps->p++;
    sc_xml_skip_space(ps);
    if (ps->p >= ps->end || (*ps->p != '"' && *ps->p != '\''))
      return sc_xml_fail(ps, line, "value of attribute '%s' of <%s> is not quoted (found %s)", name,
                         node->name, sc_xml_describe(ps, d, sizeof(d)));
    SC_CHECK(sc_xml_parse_value(ps, name, node->name, line, &attr->value));
    const sc_xml_attr_t *twin = sc_xml_attr_find(node, name);
    if (twin != NULL)
      return sc_xml_fail(ps, line, "attribute '%s' appears twice in <%s> (first at line %d)", name,
                         node->name, twin->line);
    if (last == NULL)
      node->first_attr = attr;
    else
      last->next = attr;
    last = attr;
  }
}

typedef struct sc_xml_cursor {
  sc_xml_node_t *open;  /* innermost element not closed yet, NULL at top level */
  sc_xml_node_t *root;  /* first element of the file */
  int root_closed_line; /* where the root ended, once it has */
} sc_xml_cursor_t;

static sc_result_t sc_xml_parse_start_tag(sc_xml_parser_t *ps, sc_xml_cursor_t *cur) {
  int line = ps->line;
  char d[16];
  ps->p++; /* '<' */
  size_t n = sc_xml_name_length(ps);
  if (n == 0)
    return sc_xml_fail(ps, line, "'<' is not followed by an element name (found %s)",
                       sc_xml_describe(ps, d, sizeof(d)));
  if (cur->open == NULL && cur->root != NULL)
    return sc_xml_fail(ps, line,
                       "garbage after the root element: <%.*s> follows <%s>, which ended at line "
                       "%d (a file has exactly one root element)",
                       (int)n, ps->p, cur->root->name, cur->root_closed_line);
  if (++ps->elements > SC_XML_MAX_ELEMENTS)
    return sc_xml_fail(ps, line, "more than %d elements: too large for a topology file",
                       SC_XML_MAX_ELEMENTS);
  sc_xml_node_t *node = sc_xml_alloc(ps->doc, sizeof(*node));
  char *name = node == NULL ? NULL : sc_xml_copy(ps->doc, ps->p, n);
  if (name == NULL)
    return sc_xml_no_memory(ps);
  ps->p += n;
  node->name = name;
  node->line = line;
  node->parent = cur->open;
  if (cur->open == NULL) {
    cur->root = node;
  } else if (cur->open->last_child == NULL) {
    cur->open->first_child = cur->open->last_child = node;
  } else {
    cur->open->last_child->next_sibling = node;
    cur->open->last_child = node;
  }
  bool self_closing = false;
  SC_CHECK(sc_xml_parse_attributes(ps, node, line, &self_closing));
  if (self_closing) {
    if (cur->open == NULL)
      cur->root_closed_line = line;
    return SYMCOMM_OK;
  }
  if (ps->depth >= SC_XML_MAX_DEPTH)
    return sc_xml_fail(ps, line, "<%s> is nested more than %d elements deep", name,
                       SC_XML_MAX_DEPTH);
  ps->depth++;
  cur->open = node;
  return SYMCOMM_OK;
}

static sc_result_t sc_xml_parse_end_tag(sc_xml_parser_t *ps, sc_xml_cursor_t *cur) {
  int line = ps->line;
  char d[16];
  ps->p += 2; /* "</" */
  size_t n = sc_xml_name_length(ps);
  if (n == 0)
    return sc_xml_fail(ps, line, "'</' is not followed by an element name (found %s)",
                       sc_xml_describe(ps, d, sizeof(d)));
  const char *name = ps->p;
  ps->p += n;
  sc_xml_skip_space(ps);
  if (ps->p >= ps->end || *ps->p != '>')
    return sc_xml_fail(ps, line, "closing tag </%.*s> is not terminated by '>' (found %s)", (int)n,
                       name, sc_xml_describe(ps, d, sizeof(d)));
  ps->p++;
  sc_xml_node_t *open = cur->open;
  if (open == NULL)
    return sc_xml_fail(ps, line, "closing tag </%.*s> without a matching opening tag", (int)n,
                       name);
  if (strlen(open->name) != n || memcmp(open->name, name, n) != 0)
    return sc_xml_fail(ps, line, "mismatched closing tag: </%.*s> closes <%s> opened at line %d",
                       (int)n, name, open->name, open->line);
  if (open->parent == NULL)
    cur->root_closed_line = line;
  cur->open = open->parent;
  ps->depth--;
  return SYMCOMM_OK;
}

/* Skips from ps->p past the next `terminator`; `what` names the construct. */
static sc_result_t sc_xml_skip_past(sc_xml_parser_t *ps, size_t skip, const char *terminator,
                                    const char *what) {
  int line = ps->line;
  const char *end = sc_xml_search(ps->p + skip, ps->end, terminator);
  if (end == NULL)
    return sc_xml_fail(ps, line, "unterminated %s: no '%s' before the end of the file", what,
                       terminator);
  sc_xml_advance(ps, (size_t)(end - ps->p) + strlen(terminator));
  return SYMCOMM_OK;
}

/* Text between tags is ignored, but outside the root element only white
 * space may appear. */
static sc_result_t sc_xml_skip_text(sc_xml_parser_t *ps, const sc_xml_cursor_t *cur) {
  while (ps->p < ps->end && *ps->p != '<') {
    if (cur->open == NULL && !sc_xml_is_space(*ps->p)) {
      if (cur->root == NULL)
        return sc_xml_fail(ps, ps->line, "text before the root element");
      return sc_xml_fail(ps, ps->line,
                         "garbage after the root element <%s>, which ended at line %d",
                         cur->root->name, cur->root_closed_line);
    }
    if (*ps->p == '\n')
      ps->line++;
    ps->p++;
  }
  return SYMCOMM_OK;
}

static sc_result_t sc_xml_parse_document(sc_xml_parser_t *ps) {
  sc_xml_cursor_t cur = {NULL, NULL, 0};
  if (sc_xml_starts(ps, "\xef\xbb\xbf")) /* UTF-8 byte order mark */
    ps->p += 3;
  while (ps->p < ps->end) {
    if (*ps->p != '<') {
      SC_CHECK(sc_xml_skip_text(ps, &cur));
    } else if (sc_xml_starts(ps, "<?")) {
      SC_CHECK(sc_xml_skip_past(ps, 2, "?>", "processing instruction '<?'"));
    } else if (sc_xml_starts(ps, "<!--")) {
      SC_CHECK(sc_xml_skip_past(ps, 4, "-->", "comment"));
    } else if (sc_xml_starts(ps, "<![CDATA[")) {
      if (cur.open == NULL)
        return sc_xml_fail(ps, ps->line, "CDATA section outside the root element");
      SC_CHECK(sc_xml_skip_past(ps, 9, "]]>", "CDATA section"));
    } else if (sc_xml_starts(ps, "<!")) {
      return sc_xml_fail(ps, ps->line,
                         "'<!' declarations (DOCTYPE, ENTITY) are not supported in topology "
                         "files");
    } else if (sc_xml_starts(ps, "</")) {
      SC_CHECK(sc_xml_parse_end_tag(ps, &cur));
    } else {
      SC_CHECK(sc_xml_parse_start_tag(ps, &cur));
    }
  }
  if (cur.open != NULL)
    return sc_xml_fail(ps, cur.open->line,
                       "unclosed tag: <%s> opened here is never closed (the file ends at line %d)",
                       cur.open->name, ps->line);
  if (cur.root == NULL)
    return sc_xml_fail(ps, ps->line, "empty file: no root element");
  ps->doc->root = cur.root;
  return SYMCOMM_OK;
}

sc_result_t sc_xml_parse(const char *text, size_t len, const char *name, sc_xml_doc_t **doc) {
  if (name == NULL)
    name = "(xml text)";
  if (doc == NULL || (text == NULL && len > 0))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s: no text or no output given", name);
  if (len > SC_XML_MAX_BYTES)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                    "%s: %zu bytes, more than the %zu MiB a topology file may have", name, len,
                    SC_XML_MAX_BYTES >> 20);
  if (text == NULL)
    text = ""; /* no arithmetic on a null pointer below */
  sc_xml_parser_t ps = {text, text + len, 1, name, NULL, 0, 0};
  const char *nul = len == 0 ? NULL : memchr(text, '\0', len);
  if (nul != NULL) {
    sc_xml_advance(&ps, (size_t)(nul - text));
    return sc_xml_fail(&ps, ps.line, "NUL byte in the text: not an XML file");
  }
  ps.doc = calloc(1, sizeof(*ps.doc));
  if (ps.doc == NULL)
    return sc_xml_no_memory(&ps);
  sc_result_t result = sc_xml_parse_document(&ps);
  if (result != SYMCOMM_OK) {
    sc_xml_free(ps.doc);
    return result;
  }
  *doc = ps.doc;
  return SYMCOMM_OK;
}

/* ---------------------------------------------------------------- queries */

const sc_xml_node_t *sc_xml_root(const sc_xml_doc_t *doc) { return doc == NULL ? NULL : doc->root; }

const sc_xml_attr_t *sc_xml_attr_find(const sc_xml_node_t *node, const char *name) {
  if (node == NULL || name == NULL)
    return NULL;
  for (const sc_xml_attr_t *a = node->first_attr; a != NULL; a = a->next)
    if (strcmp(a->name, name) == 0)
      return a;
  return NULL;
}

const char *sc_xml_attr(const sc_xml_node_t *node, const char *name) {
  const sc_xml_attr_t *a = sc_xml_attr_find(node, name);
  return a == NULL ? NULL : a->value;
}

int sc_xml_is(const sc_xml_node_t *node, const char *name) {
  return node != NULL && strcmp(node->name, name) == 0;
}

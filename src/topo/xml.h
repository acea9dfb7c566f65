/* A small XML reader, enough for NCCL topology files and nothing outside libc.
 *
 * It builds a tree of elements (name, attributes, children, line number) and
 * ignores text content. Supported: the <?xml ...?> declaration and other
 * processing instructions, comments, CDATA sections, self-closing tags,
 * attribute values in '...' or "...", the five predefined entities and numeric
 * character references (&#65; &#x41;). Not supported: DOCTYPE and entity
 * declarations. Every error in the text is INVALID_ARGUMENT with the sentence
 * "<name>:<line>: <what is wrong>" (OUT_OF_MEMORY when memory runs out).
 *
 * The input is bounded (SC_XML_MAX_BYTES, SC_XML_MAX_ELEMENTS,
 * SC_XML_MAX_ATTRIBUTES) and so is the nesting (SC_XML_MAX_DEPTH), so a
 * hostile file costs bounded memory and time. */
#ifndef SC_TOPO_XML_H
#define SC_TOPO_XML_H

#include <stddef.h>

#include "util/error.h"

#define SC_XML_MAX_BYTES ((size_t)16 << 20)
#define SC_XML_MAX_DEPTH 64
#define SC_XML_MAX_ELEMENTS 200000
#define SC_XML_MAX_ATTRIBUTES 256 /* per element; keeps the duplicate check cheap */

typedef struct sc_xml_attr {
  const char *name;
  const char *value; /* entities already replaced */
  int line;
  struct sc_xml_attr *next;
} sc_xml_attr_t;

typedef struct sc_xml_node {
  const char *name;
  int line; /* line of the '<' that opens the element */
  struct sc_xml_node *parent;
  struct sc_xml_node *first_child;
  struct sc_xml_node *last_child;
  struct sc_xml_node *next_sibling;
  sc_xml_attr_t *first_attr;
} sc_xml_node_t;

typedef struct sc_xml_doc sc_xml_doc_t;

/* Parses len bytes of text (no terminating NUL needed). `name` (a file path)
 * starts every error sentence. *doc is set only on success. */
sc_result_t sc_xml_parse(const char *text, size_t len, const char *name, sc_xml_doc_t **doc);
void sc_xml_free(sc_xml_doc_t *doc);

const sc_xml_node_t *sc_xml_root(const sc_xml_doc_t *doc);

/* The value of attribute `name` of `node`, NULL when absent. */
const char *sc_xml_attr(const sc_xml_node_t *node, const char *name);
const sc_xml_attr_t *sc_xml_attr_find(const sc_xml_node_t *node, const char *name);

/* Whether node is an element called `name`. */
int sc_xml_is(const sc_xml_node_t *node, const char *name);

#endif

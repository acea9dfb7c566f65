/* The XML reader under the topology files: what it accepts, the tree it
 * builds, and an error sentence naming the right line for each malformation. */
#include "topo/xml.h"
#include "topo_test_util.h"

static sc_xml_doc_t *parse_ok(const char *text) {
  sc_xml_doc_t *doc = NULL;
  TEST_OK(sc_xml_parse(text, strlen(text), "t.xml", &doc));
  TEST_ASSERT(doc != NULL && sc_xml_root(doc) != NULL);
  return doc;
}

static void expect_error(const char *text, size_t len, int line, const char *needle,
                         int test_line) {
  sc_xml_doc_t *doc = (sc_xml_doc_t *)(uintptr_t)0x1;
  sc_error_clear();
  sc_result_t r = sc_xml_parse(text, len, "t.xml", &doc);
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "t.xml:%d: ", line);
  const char *msg = sc_error_last();
  if (r != SYMCOMM_ERR_INVALID_ARGUMENT || strncmp(msg, prefix, strlen(prefix)) != 0 ||
      !test_contains(msg, needle) || doc != (sc_xml_doc_t *)(uintptr_t)0x1)
    test_fail(__FILE__, test_line, "expected '%s...%s', got %s: '%s'", prefix, needle,
              sc_result_name(r), msg);
}
#define EXPECT_ERROR(text, line, needle)                                                           \
  expect_error((text), strlen(text), (line), (needle), __LINE__)

static void test_tree(void) {
  const char *text =
      "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!-- a comment with <tags> & ampersands -->\n"
      "<system version=\"1\">\n"
      "  <cpu numaid='0' name='say \"hi\"'>\n"
      "    <pci busid=\"0000:07:00.0\"\n"
      "         note=\"a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#65;&#x42;\"/>\n"
      "    text is ignored, even &stray; ampersands\n"
      "    <![CDATA[ <not> a tag ]]>\n"
      "    <?pi inside?>\n"
      "    <nic><net name=\"\xc3\xa9th0\"/></nic>\n"
      "  </cpu >\n"
      "  <cpu numaid=\"1\" />\n"
      "</system>\n"
      "<!-- trailing comment -->\n";
  sc_xml_doc_t *doc = parse_ok(text);
  const sc_xml_node_t *root = sc_xml_root(doc);
  TEST_ASSERT(sc_xml_is(root, "system") && root->line == 3 && root->parent == NULL);
  TEST_ASSERT(strcmp(sc_xml_attr(root, "version"), "1") == 0);
  TEST_ASSERT(sc_xml_attr(root, "missing") == NULL);
  const sc_xml_node_t *cpu0 = root->first_child;
  TEST_ASSERT(sc_xml_is(cpu0, "cpu") && cpu0->line == 4 && cpu0->parent == root);
  TEST_ASSERT(strcmp(sc_xml_attr(cpu0, "name"), "say \"hi\"") == 0);
  const sc_xml_node_t *pci = cpu0->first_child;
  TEST_ASSERT(sc_xml_is(pci, "pci") && pci->line == 5 && pci->first_child == NULL);
  TEST_ASSERT(strcmp(sc_xml_attr(pci, "note"), "a & b <c> \"d\" 'e' AB") == 0, "'%s'",
              sc_xml_attr(pci, "note"));
  TEST_ASSERT(sc_xml_attr_find(pci, "note")->line == 6);
  const sc_xml_node_t *nic = pci->next_sibling;
  TEST_ASSERT(sc_xml_is(nic, "nic") && nic->line == 10 && nic->next_sibling == NULL);
  TEST_ASSERT(strcmp(sc_xml_attr(nic->first_child, "name"), "\xc3\xa9th0") == 0);
  const sc_xml_node_t *cpu1 = cpu0->next_sibling;
  TEST_ASSERT(sc_xml_is(cpu1, "cpu") && cpu1->line == 12 && cpu1->first_child == NULL);
  TEST_ASSERT(cpu1->next_sibling == NULL && root->last_child == cpu1);
  sc_xml_free(doc);

  /* Attribute order is kept; a value may span lines; numeric references
   * beyond ASCII become UTF-8. */
  doc = parse_ok("<a z=\"1\" y=\"2\nline\" x=\"&#xe9;&#8364;&#x1F600;\"/>");
  root = sc_xml_root(doc);
  const sc_xml_attr_t *a = root->first_attr;
  TEST_ASSERT(strcmp(a->name, "z") == 0 && strcmp(a->next->name, "y") == 0);
  TEST_ASSERT(strcmp(a->next->value, "2\nline") == 0 && a->next->next->line == 2);
  TEST_ASSERT(strcmp(sc_xml_attr(root, "x"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0);
  sc_xml_free(doc);
  sc_xml_free(NULL);
}

static void test_errors(void) {
  EXPECT_ERROR("<system>\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:07:00.0\"/>\n", 2,
               "unclosed tag: <cpu>");
  EXPECT_ERROR("<system>\n<cpu>\n</pci>\n</system>\n", 3,
               "mismatched closing tag: </pci> closes <cpu> opened at line 2");
  EXPECT_ERROR("<system>\n<cpu numaid \"0\"/>\n</system>\n", 2,
               "attribute 'numaid' of <cpu> has no '='");
  EXPECT_ERROR("<system>\n<cpu\n numaid=\"0/>\n</system>\n", 3,
               "unterminated value of attribute 'numaid'");
  EXPECT_ERROR("<system>\n<cpu numaid='0/>\n", 2, "unterminated value of attribute 'numaid'");
  EXPECT_ERROR("<system/>\n\n<system/>\n", 3, "garbage after the root element");
  EXPECT_ERROR("<system>\n</system>\nhello\n", 3,
               "garbage after the root element <system>, which ended at line 2");
  EXPECT_ERROR("hello <system/>", 1, "text before the root element");
  EXPECT_ERROR("", 1, "empty file");
  EXPECT_ERROR("\n<?xml version=\"1.0\"?>\n<!-- nothing -->\n", 4, "empty file");
  EXPECT_ERROR("<system>\n<!-- oops\n</system>\n", 2, "unterminated comment");
  EXPECT_ERROR("<?xml version=\"1.0\"\n<system/>\n", 1, "unterminated processing instruction");
  EXPECT_ERROR("<system>\n<![CDATA[ x\n</system>", 2, "unterminated CDATA");
  EXPECT_ERROR("<![CDATA[x]]><system/>", 1, "CDATA section outside the root element");
  EXPECT_ERROR("<!DOCTYPE system>\n<system/>", 1, "not supported");
  EXPECT_ERROR("<system>\n<cpu a=\"1\" a=\"2\"/>\n</system>", 2,
               "attribute 'a' appears twice in <cpu>");
  EXPECT_ERROR("<system>\n<cpu a=\"x &foo; y\"/>\n</system>", 2, "unknown entity '&foo;'");
  EXPECT_ERROR("<system>\n<cpu a=\"x & y\"/>\n</system>", 2, "does not start an entity");
  EXPECT_ERROR("<system>\n<cpu a=\"&#0;\"/>\n</system>", 2, "unknown entity '&#0;'");
  EXPECT_ERROR("<system>\n<cpu a=\"&#xD800;\"/>\n</system>", 2, "unknown entity");
  EXPECT_ERROR("<system>\n<cpu numaid=0/>\n</system>", 2,
               "value of attribute 'numaid' of <cpu> is not quoted");
  EXPECT_ERROR("<system>\n<cpu a=\"1\"b=\"2\"/>\n</system>", 2, "not separated");
  EXPECT_ERROR("<system>\n<cpu / >\n</system>", 2, "'/' in tag <cpu> is not followed by '>'");
  EXPECT_ERROR("<system>\n<cpu \"x\"/>\n</system>", 2, "unexpected '\"' in tag <cpu>");
  EXPECT_ERROR("<system>\n< cpu/>\n</system>", 2, "'<' is not followed by an element name");
  EXPECT_ERROR("<system>\n<1cpu/>\n</system>", 2, "'<' is not followed by an element name");
  EXPECT_ERROR("<system>\n</>\n</system>", 2, "'</' is not followed by an element name");
  EXPECT_ERROR("<system>\n</system x>", 2, "closing tag </system> is not terminated by '>'");
  EXPECT_ERROR("</system>", 1, "closing tag </system> without a matching opening tag");
  EXPECT_ERROR("<system>\n<cpu numaid=\"0\"", 2, "tag <cpu> is not terminated");
  EXPECT_ERROR("<system\n", 1, "tag <system> is not terminated");
  EXPECT_ERROR("<system>\n<cpu numaid=", 2, "not quoted (found the end of the file)");

  /* A NUL byte: the text is not XML (a binary file). */
  const char with_nul[] = "<system>\n\n<cpu/>\0</system>";
  expect_error(with_nul, sizeof(with_nul) - 1, 3, "NUL byte", __LINE__);

  /* No text at all, or no place for the result. */
  sc_xml_doc_t *doc;
  TEST_EXPECT_RESULT(sc_xml_parse(NULL, 0, "t.xml", &doc), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "t.xml:1: empty file"), "%s", sc_error_last());
  TEST_EXPECT_RESULT(sc_xml_parse(NULL, 3, "t.xml", &doc), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_xml_parse("<a/>", 4, "t.xml", NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
}

/* Nesting deeper than SC_XML_MAX_DEPTH is refused, up to it is fine. */
static void test_depth(void) {
  char text[2048];
  for (int depth = SC_XML_MAX_DEPTH; depth <= SC_XML_MAX_DEPTH + 1; depth++) {
    size_t n = 0;
    for (int i = 0; i < depth; i++)
      n += (size_t)snprintf(text + n, sizeof(text) - n, "<e%d>\n", i);
    for (int i = depth - 1; i >= 0; i--)
      n += (size_t)snprintf(text + n, sizeof(text) - n, "</e%d>", i);
    if (depth == SC_XML_MAX_DEPTH) {
      sc_xml_doc_t *doc = parse_ok(text);
      sc_xml_free(doc);
    } else {
      EXPECT_ERROR(text, SC_XML_MAX_DEPTH + 1, "<e64> is nested more than 64 elements deep");
    }
  }
}

/* Up to SC_XML_MAX_ATTRIBUTES attributes per element, not more. */
static void test_attribute_limit(void) {
  char text[8192];
  for (int count = SC_XML_MAX_ATTRIBUTES; count <= SC_XML_MAX_ATTRIBUTES + 1; count++) {
    size_t n = (size_t)snprintf(text, sizeof(text), "<a\n");
    for (int i = 0; i < count; i++)
      n += (size_t)snprintf(text + n, sizeof(text) - n, " k%d=\"\"", i);
    snprintf(text + n, sizeof(text) - n, "/>");
    if (count == SC_XML_MAX_ATTRIBUTES) {
      sc_xml_doc_t *doc = parse_ok(text);
      sc_xml_free(doc);
    } else {
      EXPECT_ERROR(text, 2, "<a> has more than 256 attributes");
    }
  }
}

/* Inputs past SC_XML_MAX_BYTES are refused before being read. */
static void test_size_limit(void) {
  size_t len = SC_XML_MAX_BYTES + 1;
  char *big = malloc(len);
  TEST_ASSERT(big != NULL);
  memset(big, ' ', len);
  memcpy(big, "<a/>", 4);
  sc_xml_doc_t *doc;
  sc_error_clear();
  TEST_EXPECT_RESULT(sc_xml_parse(big, len, "big.xml", &doc), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "big.xml: 16777217 bytes, more than the 16 MiB"), "%s",
              sc_error_last());
  /* Exactly at the limit is accepted (white space after the root). */
  TEST_OK(sc_xml_parse(big, len - 1, "big.xml", &doc));
  sc_xml_free(doc);
  free(big);
}

/* Many elements: fine up to the cap, and the whole tree is freed (ASan). */
static void test_many_elements(void) {
  size_t count = 50000;
  size_t len = 16 + count * 16;
  char *text = malloc(len);
  TEST_ASSERT(text != NULL);
  size_t n = (size_t)snprintf(text, len, "<s>");
  for (size_t i = 0; i < count; i++)
    n += (size_t)snprintf(text + n, len - n, "<p a=\"%zu\"/>", i % 10);
  n += (size_t)snprintf(text + n, len - n, "</s>");
  sc_xml_doc_t *doc = NULL;
  TEST_OK(sc_xml_parse(text, n, "many.xml", &doc));
  size_t seen = 0;
  for (const sc_xml_node_t *c = sc_xml_root(doc)->first_child; c != NULL; c = c->next_sibling)
    seen++;
  TEST_ASSERT(seen == count, "%zu children", seen);
  sc_xml_free(doc);
  free(text);
}

int main(void) {
  test_tree();
  test_errors();
  test_depth();
  test_attribute_limit();
  test_size_limit();
  test_many_elements();
  printf("test_topo_xml: OK\n");
  return 0;
}

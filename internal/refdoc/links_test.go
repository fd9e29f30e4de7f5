package refdoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdLink is a Markdown link's target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// fence opens or closes a code block, inside which nothing is a link.
	fence = regexp.MustCompile("^\\s*```")
)

// Every relative link of the user's and the maintainers' documents resolves: to a file or a
// directory of the repository and, with #anchor into a Markdown file, to one of its headings
// as GitHub names them.
func TestRelativeLinksResolve(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, "../../README.md", "../../DESIGN.md", "../../CHANGELOG.md")
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(doc, "../../")
		for _, target := range links(string(b)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: no such file or directory", name, target)
					continue
				}
			}
			if anchor == "" || filepath.Ext(path) != ".md" {
				continue
			}
			to, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(to))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", name, target, filepath.Base(path), anchor)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d relative links: the scan missed them", checked)
	}
}

// links are the link targets of a Markdown text, outside its code blocks and code spans.
func links(md string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		if fence.MatchString(l) {
			in = !in
			continue
		}
		if in {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripSpans(l), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// stripSpans removes the code spans of a line.
func stripSpans(l string) string {
	parts := strings.Split(l, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
		}
	}
	return b.String()
}

// anchors are the anchors GitHub gives a Markdown text's headings: lower case, spaces to
// dashes, punctuation but dashes and underscores dropped; a repeated one gets -1, -2, ….
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	in := false
	for _, l := range strings.Split(md, "\n") {
		if fence.MatchString(l) {
			in = !in
			continue
		}
		if in || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// maxREADMELines is the README's length at most: it is the user's guide (what rollcheck does,
// install, a first check, reading the result, kind against production, CI, Go); the rest lives
// in docs/, maintainers' material in docs/maintainers.md.
const maxREADMELines = 300

func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, at most %d: move detail into docs/ and link it", n, maxREADMELines)
	}
}

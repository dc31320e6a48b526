// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docConfigs names, for each document, the collector configurations it explains. The document
// holds each one verbatim, from its first line that is not a comment on (the files' leading
// comments are left out of the docs): what a user copies is what the tests run.
var docConfigs = map[string][]string{
	"README.md":                    {"default.yaml"},
	"docs/recipes/jaeger-tempo.md": {"jaeger.yaml"},
	"docs/recipes/alerting.md":     {"alerting.yaml"},
	"docs/recipes/seed-formats.md": {"export.yaml"},
	"docs/recipes/team-gateway.md": {"fleet-machine.yaml", "fleet-gateway.yaml", "fleet-front.yaml"},
	"docs/recipes/native-otlp.md":  {"native.yaml"},
}

// docLinkedConfigs are the files of config/ that are not collector configurations (Prometheus'
// rules, Jaeger's own configuration): the document that uses them links them.
var docLinkedConfigs = map[string][]string{
	"docs/recipes/alerting.md":     {"alerts.yaml"},
	"docs/recipes/jaeger-tempo.md": {"jaeger-server.yaml"},
}

// TestREADMEShowsTheConfigsTheTestsRun: every file of config/ is explained by a document, which
// shows a collector configuration byte for byte (leading comments aside) and links it.
func TestREADMEShowsTheConfigsTheTestsRun(t *testing.T) {
	root := repoRoot(t)
	documented := map[string]bool{}
	for doc, names := range docConfigs {
		text := readDoc(t, root, doc)
		for _, name := range names {
			documented[name] = true
			b, err := os.ReadFile(filepath.Join(root, "config", name))
			require.NoError(t, err)
			body := string(b)
			for strings.HasPrefix(body, "#") {
				_, body, _ = strings.Cut(body, "\n")
			}
			require.NotEmpty(t, body, name)
			assert.Contains(t, text, "```yaml\n"+body+"```", "%s's copy of config/%s is out of date", doc, name)
			assert.Contains(t, text, "config/"+name, "%s links config/%s", doc, name)
		}
	}
	for doc, names := range docLinkedConfigs {
		text := readDoc(t, root, doc)
		for _, name := range names {
			documented[name] = true
			assert.Contains(t, text, "config/"+name, "%s links config/%s", doc, name)
		}
	}
	configs, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, configs)
	for _, path := range configs {
		assert.True(t, documented[filepath.Base(path)], "config/%s is shown by no document (add it to docConfigs)", filepath.Base(path))
	}

	// The top README leads to every recipe.
	readme := readDoc(t, root, "README.md")
	recipes, err := filepath.Glob(filepath.Join(root, "docs", "recipes", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, recipes)
	for _, path := range recipes {
		assert.Contains(t, readme, "docs/recipes/"+filepath.Base(path), "README links the recipe %s", filepath.Base(path))
	}
}

// TestREADMELinksResolve: every relative link of the READMEs and of docs/ names a file or folder
// of the repository, and every #anchor a heading of the file it points into.
func TestREADMELinksResolve(t *testing.T) {
	root := repoRoot(t)
	docs := documents(t, root)
	require.Contains(t, docs, "README.md")
	require.Contains(t, docs, "docs/README.md")
	headings := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if h, ok := headings[rel]; ok {
			return h
		}
		headings[rel] = anchors(readDoc(t, root, rel))
		return headings[rel]
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, doc := range docs {
		for _, m := range link.FindAllStringSubmatch(proseOf(readDoc(t, root, doc)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			rel := doc
			if path != "" {
				rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), path)))
			}
			info, err := os.Stat(filepath.Join(root, rel))
			if err != nil {
				t.Errorf("%s: link %q: %s does not exist", doc, target, rel)
				continue
			}
			if anchor != "" && !info.IsDir() && strings.HasSuffix(rel, ".md") && !anchorsOf(rel)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", doc, target, rel, anchor)
			}
		}
	}
	require.Positive(t, checked)
}

// TestAnchorsAreGitHubs: headings become the anchors GitHub gives them.
func TestAnchorsAreGitHubs(t *testing.T) {
	got := anchors("# Quick start\n```sh\n# a comment, not a heading\n```\n" +
		"## Into files: `agent_event` exactly once, contrib `file` at least once\n" +
		"### `agtrace_v1` — agtrace Agent Event v1 (seed 000)\n## Quick start\n")
	assert.Equal(t, map[string]bool{
		"quick-start": true, "quick-start-1": true,
		"into-files-agent_event-exactly-once-contrib-file-at-least-once": true,
		"agtrace_v1--agtrace-agent-event-v1-seed-000":                    true,
	}, got)
}

// documents are the Markdown files this repository writes for its users: the top README, each
// component's and command's README, and everything under docs/.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{"README.md"}
	readmes, err := filepath.Glob(filepath.Join(root, "*", "*", "README.md"))
	require.NoError(t, err)
	for _, p := range readmes {
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		if !strings.HasPrefix(rel, "_") {
			docs = append(docs, filepath.ToSlash(rel))
		}
	}
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		docs = append(docs, filepath.ToSlash(rel))
		return err
	}))
	return docs
}

func readDoc(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	require.NoError(t, err)
	return string(b)
}

// proseOf is text without its fenced code blocks.
func proseOf(text string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown text's headings as GitHub makes them: lower case, letters,
// digits, '-' and '_' kept, spaces as '-', everything else dropped, a repeated one numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(proseOf(text), "\n") {
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(line[hashes:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[hashes:])) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			a = b.String() + "-" + strconv.Itoa(i)
		}
		out[a] = true
	}
	return out
}

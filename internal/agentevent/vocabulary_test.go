// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vocabularyExceptions are the string literals outside this package that
// begin with "agent." or "gen_ai." and are not agentotel's names. Each names
// its file (relative to the module root), the top-level declaration that
// holds it and the literal ("" for any literal of the declaration). An
// exception that no longer matches anything fails the test, so that the
// list stays exact.
var vocabularyExceptions = []struct{ file, decl, literal, why string }{
	{
		"internal/storagecodec/storagecodec.go", "dict", "",
		"the compression dictionary of stored values: frozen bytes that a renamed constant must not change",
	},
	{
		"internal/vendors/claudecode/native.go", "apiRequestAttrs", "agent.name",
		"an attribute of Claude Code's own api_request events, read, not written",
	},
	{
		"internal/vendors/claudecode/native.go", "subagentCompleted", "agent.source",
		"an attribute of Claude Code's own subagent_completed events, read, not written",
	},
	{
		"internal/vendors/codex/native.go", "agentResponse", "agent.type",
		"an attribute of Codex's own agent_response events, read, not written",
	},
	{
		"exporter/agenteventexporter/universal.go", "unparsed", "agent.unparsed",
		"an event type of the universal export format (sandbox-agent's schema)",
	},
}

// TestVocabularyIsDeclaredHere holds the module to one vocabulary: every
// "agent." and "gen_ai." name (attribute keys and their prefixes, span,
// span event and metric names) in the non-test code of the module is a
// constant of this package, so that a name is spelled once and a consumer
// finds what a producer wrote. Tests keep their literals: they pin the
// names' values.
func TestVocabularyIsDeclaredHere(t *testing.T) {
	root := moduleRoot(t)
	used := make([]bool, len(vocabularyExceptions))
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return skipDir(path, rel, d.Name())
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			name := declName(decl)
			ast.Inspect(decl, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(s, "agent.") && !strings.HasPrefix(s, "gen_ai.") {
					return true
				}
				for i, e := range vocabularyExceptions {
					if e.file == rel && (e.decl == "" || e.decl == name) && (e.literal == "" || e.literal == s) {
						used[i] = true
						return true
					}
				}
				found = append(found, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s))
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	for _, f := range found {
		t.Errorf("%s: a name of the vocabulary written out; use (or add) its constant in internal/agentevent", f)
	}
	for i, e := range vocabularyExceptions {
		if !used[i] {
			t.Errorf("exception %s %s %q matches nothing: remove it", e.file, e.decl, e.literal)
		}
	}
}

// skipDir skips what is not the module's own code: this package (the
// vocabulary's home), other modules (internal/tools), and the directories
// the go tool ignores.
func skipDir(path, rel, name string) error {
	if rel == "." {
		return nil
	}
	if rel == "internal/agentevent" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

// declName is the name of a top-level declaration: the function, or the
// first name it declares.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				return s.Names[0].Name
			case *ast.TypeSpec:
				return s.Name.Name
			}
		}
	}
	return ""
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}

// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package layout holds the module to the layering its design docs describe:
// within a component, packages import only packages of a lower level, and
// the files of a component's top package reference one another without a
// cycle; the module's shared packages never import a component.
package layout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/agentotel/agentotel"

// levels declares, per component, its packages from the bottom level up
// (paths relative to the component; "" is the top package, always last).
// A package may import packages of a lower level only: not one above it,
// not one beside it. docs/design describes the same levels.
var levels = map[string][][]string{
	"receiver/agentlogreceiver": {
		{"internal/metadata"},
		{"internal/metadatatest", "internal/finder", "internal/progress", "internal/checkpoint", "internal/testfiles"},
		{"internal/watch"},
		{"internal/tailer", "internal/source"},
		{"internal/jsonl", "internal/snapshot", "internal/opencode"},
		{""},
	},
	"connector/agentspanconnector": {
		{"internal/metadata"},
		{"internal/metadatatest", "internal/spanmodel"},
		{"internal/state"},
		{""},
	},
	"connector/agentmetricsconnector": {
		{"internal/metadata"},
		{"internal/metadatatest"},
		{""},
	},
	"exporter/agenteventexporter": {
		{"internal/metadata", "schemas"},
		{"internal/metadatatest"},
		{""},
	},
	"processor/agentnativeprocessor": {
		{"internal/metadata", "internal/owners"},
		{"internal/metadatatest"},
		{""},
	},
	"processor/genaicostprocessor": {
		{"internal/metadata", "internal/pricing", "internal/pricing/gen"},
		{"internal/metadatatest"},
		{""},
	},
}

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Export     string
	Standard   bool
}

// goList runs `go list -json` with args and decodes its stream.
func goList(t *testing.T, args ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...) //nolint:gosec // G204: go list over this module's own packages
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	return dir
}

// TestPackagesImportDownward: every package of a component is declared at
// a level, and imports only packages of its component at a lower level.
func TestPackagesImportDownward(t *testing.T) {
	pkgs := goList(t, "./...")
	levelOf := map[string]int{}
	for comp, lv := range levels {
		for i, names := range lv {
			for _, n := range names {
				levelOf[pathJoin(module, comp, n)] = i
			}
		}
	}
	checked := 0
	for _, p := range pkgs {
		comp := componentOf(p.ImportPath)
		if comp == "" {
			// A shared package of the module never imports a component.
			for _, imp := range p.Imports {
				assert.Empty(t, componentOf(imp), "%s imports the component package %s", p.ImportPath, imp)
			}
			continue
		}
		lv, ok := levelOf[p.ImportPath]
		if !assert.True(t, ok, "%s is not declared at a level of %s (tests/layout)", p.ImportPath, comp) {
			continue
		}
		for _, imp := range p.Imports {
			if componentOf(imp) == "" {
				continue
			}
			assert.Equal(t, comp, componentOf(imp), "%s imports another component's package %s", p.ImportPath, imp)
			il, ok := levelOf[imp]
			if ok {
				assert.Less(t, il, lv, "%s (level %d) imports %s (level %d): not below it", p.ImportPath, lv, imp, il)
			}
			checked++
		}
	}
	assert.Positive(t, checked, "component imports were checked")
}

// TestOnlyTheRegistryKnowsTheAgents: no package imports an agent's vendor
// package (internal/vendors/<agent>) but the registry set
// (internal/vendors/all, which anyone may import to fill the registry) and
// other vendor packages: every other part asks the registry
// (internal/agents) for what it needs of an agent. A vendor package imports only
// the model, the registry, the JSON package and other vendor packages (a
// fork's format: Kilo's is OpenCode's), never a component or a collector
// package. Test files are free to import a vendor package.
func TestOnlyTheRegistryKnowsTheAgents(t *testing.T) {
	const vendors = module + "/internal/vendors/"
	allowed := []string{
		module + "/internal/agentevent", module + "/internal/agents", module + "/internal/jsonx",
		module + "/internal/textutil", module + "/internal/testrun",
	}
	// A reader kind of a format several agents share reads that format's
	// package: the OpenCode data directory reader (agents.OpenCodeStore),
	// for OpenCode and its forks.
	formatReaders := map[string]string{
		module + "/receiver/agentlogreceiver/internal/opencode": vendors + "opencode",
	}
	pkgs := goList(t, "./...")
	checked := 0
	for _, p := range pkgs {
		if p.ImportPath == vendors+"vendortest" {
			continue // the vendor packages' test support
		}
		inVendor := strings.HasPrefix(p.ImportPath, vendors)
		for _, imp := range p.Imports {
			switch {
			case inVendor && strings.HasPrefix(imp, module+"/"):
				ok := slices.Contains(allowed, imp) || (strings.HasPrefix(imp, vendors) && imp != vendors+"vendortest")
				assert.True(t, ok, "vendor package %s imports %s", p.ImportPath, imp)
				checked++
			case inVendor:
				assert.NotContains(t, imp, "go.opentelemetry.io/collector", "vendor package %s imports a collector package %s", p.ImportPath, imp)
			case imp == vendors+"all":
				// The registry set: what registers every agent.
			case strings.HasPrefix(imp, vendors) && formatReaders[p.ImportPath] == imp:
			case strings.HasPrefix(imp, vendors):
				assert.Fail(t, "a vendor package imported", "%s imports the vendor package %s: ask the registry (internal/agents) instead", p.ImportPath, imp)
				checked++
			}
		}
	}
	assert.Positive(t, checked, "vendor imports were checked")
}

// TestTopPackageFilesHaveNoCycle: in each component's top package, the
// graph of which non-test file references a declaration of which other
// file has no cycle: the files read from the top down.
func TestTopPackageFilesHaveNoCycle(t *testing.T) {
	for comp := range levels {
		t.Run(comp, func(t *testing.T) {
			graph := fileGraph(t, "./"+comp)
			require.NotEmpty(t, graph)
			for _, cycle := range cycles(graph) {
				t.Errorf("%s: files that depend on each other: %s", comp, strings.Join(cycle, " ↔ "))
			}
		})
	}
}

// fileGraph type-checks the package in dir (its imports from the build
// cache's export data) and returns, per non-test file, the files whose
// package-level declarations, methods or fields it uses.
func fileGraph(t *testing.T, dir string) map[string][]string {
	t.Helper()
	deps := goList(t, "-export", "-deps", dir)
	exports := map[string]string{}
	var target listed
	for _, p := range deps {
		exports[p.ImportPath] = p.Export
		target = p // -deps lists the package itself last
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range target.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(target.Dir, name), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok || e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	_, err := (&types.Config{Importer: imp}).Check(target.ImportPath, fset, files, info)
	require.NoError(t, err)

	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	graph := map[string][]string{}
	for _, f := range files {
		graph[fileOf(f.Pos())] = nil
	}
	add := func(from token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != target.ImportPath || !obj.Pos().IsValid() {
			return
		}
		a, b := fileOf(from), fileOf(obj.Pos())
		if a != b && !slices.Contains(graph[a], b) {
			graph[a] = append(graph[a], b)
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		add(sel.Pos(), s.Obj())
	}
	return graph
}

// cycles returns the strongly connected components of more than one file.
func cycles(graph map[string][]string) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range graph[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			if len(scc) > 1 {
				slices.Sort(scc)
				out = append(out, scc)
			}
		}
	}
	keys := make([]string, 0, len(graph))
	for k := range graph {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, seen := index[k]; !seen {
			visit(k)
		}
	}
	return out
}

// componentOf is the component (path relative to the module) a package
// belongs to, or "" for the module's shared packages and others.
func componentOf(importPath string) string {
	rel, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return ""
	}
	for comp := range levels {
		if rel == comp || strings.HasPrefix(rel, comp+"/") {
			return comp
		}
	}
	return ""
}

func pathJoin(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, "/")
}

func TestCyclesFindsMutualFiles(t *testing.T) {
	got := cycles(map[string][]string{
		"a.go": {"b.go"}, "b.go": {"c.go"}, "c.go": {"a.go"}, "d.go": {"a.go"}, "e.go": nil,
	})
	assert.Equal(t, [][]string{{"a.go", "b.go", "c.go"}}, got)
	assert.Empty(t, cycles(map[string][]string{"a.go": {"b.go"}, "b.go": nil}))
}

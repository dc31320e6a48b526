// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package schemas holds the JSON Schema of each agent_event exporter format,
// written from its seed document, and validates lines against them. The
// exporter's tests and the end-to-end tests check every line they see; the
// collector itself does not import this package.
package schemas

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentotel/agentotel/internal/agents"
	// The agents whose sources the agtrace schema admits.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

//go:embed *.schema.json
var files embed.FS

// Formats are the formats a schema exists for.
var Formats = []string{"agtrace_v1", "universal", "agent_manager", "canonical_task"}

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	loadErr  error
)

func load() {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	compiled = map[string]*jsonschema.Schema{}
	for _, f := range Formats {
		name := f + ".schema.json"
		b, err := files.ReadFile(name)
		if err != nil {
			loadErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			loadErr = fmt.Errorf("%s: %w", name, err)
			return
		}
		if f == "agtrace_v1" {
			if err = enumSources(doc); err != nil {
				loadErr = fmt.Errorf("%s: %w", name, err)
				return
			}
		}
		if err = c.AddResource(name, doc); err != nil {
			loadErr = fmt.Errorf("%s: %w", name, err)
			return
		}
		s, err := c.Compile(name)
		if err != nil {
			loadErr = fmt.Errorf("%s: %w", name, err)
			return
		}
		compiled[f] = s
	}
}

// enumSources sets the agtrace schema's source enum to the registered
// agents' sources: the spec's enum, extended by every agent agentotel reads.
func enumSources(doc any) error {
	props, _ := doc.(map[string]any)["properties"].(map[string]any)
	source, ok := props["source"].(map[string]any)
	if !ok {
		return errors.New("no properties.source")
	}
	var enum []any
	for _, d := range agents.All() {
		enum = append(enum, string(d.Source))
	}
	source["enum"] = enum
	return nil
}

// Validate checks one line (one JSON value) of a format against its schema.
func Validate(format string, line []byte) error {
	once.Do(load)
	if loadErr != nil {
		return loadErr
	}
	s := compiled[format]
	if s == nil {
		return fmt.Errorf("no schema for format %q", format)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// ValidateLines checks every line of a JSON Lines document; it reports the
// first failing line (1-based) and how many lines it checked.
func ValidateLines(format string, doc []byte) (int, error) {
	if len(doc) == 0 {
		return 0, nil
	}
	n := 0
	for line := range bytes.SplitSeq(bytes.TrimSuffix(doc, []byte("\n")), []byte("\n")) {
		n++
		if err := Validate(format, line); err != nil {
			return n, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return n, nil
}

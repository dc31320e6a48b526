// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFileLanguage(t *testing.T) {
	for path, want := range map[string]string{
		"/src/main.go":             "go",
		"/src/App.TSX":             "typescript",
		"/src/lib.mts":             "typescript",
		`C:\work\app\Program.cs`:   "csharp",
		`C:\work\build.ps1`:        "powershell",
		"notes.md":                 "markdown",
		"/repo/Dockerfile":         "dockerfile",
		`C:\repo\GNUmakefile`:      "makefile",
		"/repo/.eslintrc.json":     "json",
		"/home/me/.bashrc":         "",
		"/home/me/.md":             "",
		"/repo/LICENSE":            "",
		"/repo/v1.2/README":        "",
		`C:\repo\v1.2\README`:      "",
		"/repo/archive.unknownext": "",
		"":                         "",
	} {
		assert.Equal(t, want, FileLanguage(path), path)
	}
}

func TestToolDeclined(t *testing.T) {
	assert.True(t, ToolDeclined(ErrorTypeRejected))
	assert.True(t, ToolDeclined(ErrorTypePermissionDenied))
	assert.False(t, ToolDeclined(ErrorTypeInterrupted))
	assert.False(t, ToolDeclined(ErrorTypeTool))
	assert.False(t, ToolDeclined(""))
}

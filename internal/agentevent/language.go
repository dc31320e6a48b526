// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import "strings"

// languages maps file extensions (lower case, with the dot) to the language
// names of Event.FileLanguage.
var languages = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python", ".ipynb": "python", ".rs": "rust",
	".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
	".cs": "csharp", ".fs": "fsharp", ".rb": "ruby", ".php": "php", ".pl": "perl", ".lua": "lua",
	".r": "r", ".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
	".hs": "haskell", ".clj": "clojure", ".zig": "zig", ".nim": "nim", ".jl": "julia",
	".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell",
	".bat": "batch", ".cmd": "batch",
	".sql": "sql", ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "sass",
	".less": "less", ".vue": "vue", ".svelte": "svelte",
	".json": "json", ".jsonc": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml",
	".toml": "toml", ".xml": "xml", ".ini": "ini", ".proto": "protobuf", ".graphql": "graphql",
	".tf": "terraform", ".md": "markdown", ".mdx": "markdown", ".rst": "restructuredtext",
	".tex": "latex", ".txt": "text", ".csv": "csv",
}

// FileLanguage names the language of a file from its name: its extension,
// or the few names that are a language of their own (Dockerfile, Makefile).
// "" when unknown. Windows paths count (the last separator may be a
// backslash), and a dot file (".bashrc") has no extension.
func FileLanguage(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	switch strings.ToLower(base) {
	case "dockerfile":
		return "dockerfile"
	case "makefile", "gnumakefile":
		return "makefile"
	}
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return ""
	}
	return languages[strings.ToLower(base[dot:])]
}

// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package redact replaces well-known credential shapes in short texts —
// command lines, URLs, file paths, tool arguments — with a placeholder. It
// is what keeps a `curl -H "Authorization: Bearer …"` or an
// `export GITHUB_TOKEN=…` in an agent's log from leaving the machine in an
// always-on attribute.
//
// It recognizes shapes, not secrets: authorization and API-key headers,
// assignments, flags and YAML/INI/JSON fields whose name says secret
// (`API_KEY=…`, `--password …`, `"clientSecret": "…"`, `?access_token=…`,
// `aws_secret_access_key = …`), passwords in URLs, `curl -u user:password`,
// `docker login -p …`, `mysql -p…`, .netrc passwords, PEM private keys, and the prefixes of
// common tokens (GitHub, GitLab, Slack, OpenAI, Anthropic, AWS, Google,
// Stripe, npm, PyPI, Hugging Face, SendGrid, DigitalOcean, JWTs). A name,
// the scheme of a header and the structure around the secret are kept, so
// the text still says what was done. References (`$TOKEN`, `${TOKEN}`,
// `$(cat key)`) are not secrets and stay.
//
// The package is pure: no I/O, no state, safe for concurrent use.
package redact

import (
	"regexp"
	"strings"
)

// Placeholder stands in for every credential removed.
const Placeholder = "[REDACTED]"

// String returns s with every credential shape it recognizes replaced by
// Placeholder. Text without one is returned as is (the same string).
// String is idempotent: redacting twice changes nothing more.
func String(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	s = redactPrivateKeys(s)
	s = redactURLPasswords(s)
	s = redactHeaders(s)
	s = redactBasicAuthFlag(s)
	s = redactJSONFields(s)
	s = redactFlags(s)
	s = redactAssignments(s)
	s = redactYAMLFields(s)
	s = redactShortPasswordFlags(s)
	s = redactTokens(s)
	return s
}

// mayHoldSecret is a cheap first look: every shape String knows has one of
// these characters (a token prefix has `_`, `-` or `.`, or is an AWS key).
func mayHoldSecret(s string) bool {
	return strings.ContainsAny(s, "=:@_-.") || strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA")
}

// --- PEM private keys -------------------------------------------------------

var privateKeyRE = regexp.MustCompile(`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)

func redactPrivateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") {
		return s
	}
	return privateKeyRE.ReplaceAllString(s, "${1}"+Placeholder+"${2}")
}

// --- scheme://user:password@host --------------------------------------------

// The password ends at the last "@" before the host (passwords may hold an
// unescaped "@"); a "/" or whitespace ends the authority.
var urlPasswordRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@"'` + "`" + `]*:)([^/\s"'` + "`" + `]+)@`)

func redactURLPasswords(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	return replaceSubmatch(urlPasswordRE, s, func(m []string) string {
		if isReference(m[2]) || strings.HasPrefix(m[2], Placeholder) {
			return m[0]
		}
		return m[1] + Placeholder + "@"
	})
}

// --- headers ----------------------------------------------------------------

var (
	// Authorization: <scheme> <credentials>; the scheme stays.
	authHeaderRE = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|digest|apikey|api-key|negotiate|bot|sso-key|otp)\s+)?)([^\s"'\\]+)`)
	// Headers whose whole value is a credential.
	keyHeaderRE = regexp.MustCompile(`(?i)\b((?:x-)?(?:api-key|apikey|auth-token|access-token|goog-api-key|amz-security-token|vault-token|csrf-token)|private-token|ocp-apim-subscription-key)(\s*:\s*)([^\s"'\\,]+)`)
	// Cookies: the value runs to the end of the header.
	cookieHeaderRE = regexp.MustCompile(`(?i)\b((?:set-)?cookie\s*:\s*)([^"'\r\n]+)`)
	// A bearer token on its own (`Bearer eyJ…` in a variable or a flag).
	// Real tokens have digits; "Bearer authentication" in a grep is prose.
	bearerRE = regexp.MustCompile(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})`)
)

func redactHeaders(s string) string {
	colon := strings.IndexByte(s, ':') >= 0
	if colon && containsFold(s, "authorization") {
		s = replaceSubmatch(authHeaderRE, s, func(m []string) string {
			if isReference(m[2]) || strings.HasPrefix(m[2], Placeholder) {
				return m[0]
			}
			return m[1] + Placeholder
		})
	}
	if colon && (containsFold(s, "key") || containsFold(s, "token")) {
		s = replaceSubmatch(keyHeaderRE, s, func(m []string) string {
			if isReference(m[3]) || strings.HasPrefix(m[3], Placeholder) {
				return m[0]
			}
			return m[1] + m[2] + Placeholder
		})
	}
	if colon && containsFold(s, "cookie") {
		s = replaceSubmatch(cookieHeaderRE, s, func(m []string) string {
			if isReference(m[2]) || strings.HasPrefix(m[2], Placeholder) {
				return m[0]
			}
			return m[1] + Placeholder
		})
	}
	if containsFold(s, "bearer") {
		s = replaceSubmatch(bearerRE, s, func(m []string) string {
			if !strings.ContainsAny(m[2], "0123456789") || strings.HasPrefix(m[2], Placeholder) {
				return m[0]
			}
			return m[1] + Placeholder
		})
	}
	return s
}

// containsFold is strings.Contains ignoring ASCII case, for a lower-case word.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if (s[i]|0x20) == word[0] && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// --- curl -u user:password --------------------------------------------------

var basicAuthFlagRE = regexp.MustCompile(`(^|\s)(-u\s*|--user[\s=]+|--proxy-user[\s=]+)(["']?)([^\s:"']+):([^\s"']+)`)

func redactBasicAuthFlag(s string) string {
	if !strings.Contains(s, "-u") {
		return s
	}
	return replaceSubmatch(basicAuthFlagRE, s, func(m []string) string {
		if isReference(m[5]) || strings.HasPrefix(m[5], Placeholder) || strings.HasPrefix(m[5], "//") {
			return m[0] // a URL (redis://…), whose password redactURLPasswords handled
		}
		return m[1] + m[2] + m[3] + m[4] + ":" + Placeholder
	})
}

// --- "name": "value" (JSON tool arguments, MCP arguments) --------------------

var jsonFieldRE = regexp.MustCompile(`"([A-Za-z0-9_.-]+)"(\s*:\s*)"((?:[^"\\]|\\.)*)"`)

func redactJSONFields(s string) string {
	if !strings.Contains(s, `":`) && !strings.Contains(s, `" :`) {
		return s
	}
	return replaceSubmatch(jsonFieldRE, s, func(m []string) string {
		if !SecretName(m[1]) || m[3] == "" || isReference(m[3]) || strings.HasPrefix(m[3], Placeholder) {
			return m[0]
		}
		return `"` + m[1] + `"` + m[2] + `"` + Placeholder + `"`
	})
}

// --- --password value ---------------------------------------------------------

// redactFlags replaces the value after a flag whose name says secret
// (`--token abc`, `--password "x y"`); `--name=value` is an assignment.
// Single-letter flags (-p, -u) mean too many different things.
func redactFlags(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '-' || (i > 0 && !isSpace(s[i-1])) {
			continue
		}
		j := i
		for j < len(s) && s[j] == '-' {
			j++
		}
		k := j
		for k < len(s) && isNameByte(s[k]) && s[k] != '.' {
			k++
		}
		name := s[j:k]
		if len(name) < 3 || k == len(s) || !isSpace(s[k]) || !SecretName(name) {
			i = max(k-1, i)
			continue
		}
		v0 := k
		for v0 < len(s) && isSpace(s[v0]) {
			v0++
		}
		if v0 == len(s) || strings.IndexByte(`<>|;&-`, s[v0]) >= 0 {
			i = k - 1
			continue
		}
		start, end := valueExtent(s, v0)
		v := s[start:end]
		if v == "" || isReference(v) || strings.HasPrefix(v, Placeholder) {
			i = max(end-1, i)
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Placeholder)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// --- NAME=value ---------------------------------------------------------------

// redactAssignments replaces the value of every `name=value` whose name says
// secret: shell and .env assignments, `--flag=value`, URL query parameters,
// and `name = "value"` in code (spaces around "=" only with a quoted value:
// `a = b` is too often something else).
func redactAssignments(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '=' { // ==, a comparison
			i++
			continue
		}
		k := i
		for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		j := k
		for j > 0 && isNameByte(s[j-1]) {
			j--
		}
		name := strings.TrimLeft(s[j:k], "-.")
		if name == "" || !SecretName(name) {
			continue
		}
		v0 := i + 1
		for v0 < len(s) && (s[v0] == ' ' || s[v0] == '\t') {
			v0++
		}
		if (k != i || v0 != i+1) && (v0 == len(s) || s[v0] != '"' && s[v0] != '\'' && !strings.HasPrefix(s[v0:], `\"`)) {
			continue
		}
		start, end := valueExtent(s, v0)
		v := s[start:end]
		if v == "" || isReference(v) || strings.HasPrefix(v, Placeholder) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Placeholder)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// --- -p of login commands and MySQL clients, .netrc ------------------------------

var (
	// `docker login -u ci -p secret`, `helm registry login … --password-stdin` is fine.
	loginPasswordRE = regexp.MustCompile(`(\blogin\b[^\n|;&]*?\s-p)(\s+|=)([^\s"'|;&-][^\s"'|;&]*|"[^"]*"|'[^']*')`)
	// `mysql -u root -psecret db` (the password glued to -p; `-p` alone prompts).
	mysqlPasswordRE = regexp.MustCompile(`(\bmysql(?:dump|admin|import|show|check)?\b[^\n|;&]*?\s-p)([^\s"']\S*|"[^"]*"|'[^']*')`)
	// `machine host login user password secret` (.netrc).
	netrcPasswordRE = regexp.MustCompile(`(\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+)([^\s"']+)`)
)

func redactShortPasswordFlags(s string) string {
	if strings.Contains(s, "login") {
		s = replaceSubmatch(loginPasswordRE, s, func(m []string) string {
			v, q := unquote(m[3])
			if isReference(v) || strings.HasPrefix(v, Placeholder) {
				return m[0]
			}
			return m[1] + m[2] + q + Placeholder + q
		})
	}
	if strings.Contains(s, "mysql") {
		s = replaceSubmatch(mysqlPasswordRE, s, func(m []string) string {
			v, q := unquote(m[2])
			if isReference(v) || strings.HasPrefix(v, Placeholder) {
				return m[0]
			}
			return m[1] + q + Placeholder + q
		})
	}
	if strings.Contains(s, "machine") {
		s = replaceSubmatch(netrcPasswordRE, s, func(m []string) string {
			if isReference(m[2]) || strings.HasPrefix(m[2], Placeholder) {
				return m[0]
			}
			return m[1] + Placeholder
		})
	}
	return s
}

// --- name: value (YAML and .netrc-like lines in a here-document) ----------------

// A YAML `name: value` or INI `name = value` line (a here-document writing
// a compose file, ~/.aws/credentials, a .pypirc).
var yamlFieldRE = regexp.MustCompile(`(?m)^([ \t-]*)([A-Za-z0-9_.-]+)(:[ \t]+|[ \t]+=[ \t]*|=[ \t]+)(.*?)[ \t]*$`)

func redactYAMLFields(s string) string {
	if !strings.Contains(s, ": ") && !strings.Contains(s, ":\t") && !strings.Contains(s, " =") && !strings.Contains(s, "= ") {
		return s
	}
	return replaceSubmatch(yamlFieldRE, s, func(m []string) string {
		v, q := unquote(m[4])
		if !SecretName(m[2]) || v == "" || isReference(v) || strings.HasPrefix(v, Placeholder) ||
			strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") || strings.HasPrefix(v, "!") {
			return m[0]
		}
		return m[1] + m[2] + m[3] + q + Placeholder + q
	})
}

// valueExtent is where the value that starts at i lies: inside its quotes
// when quoted, else up to whitespace, a query separator or a shell operator.
func valueExtent(s string, i int) (start, end int) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		if k := strings.IndexByte(s[i+1:], q); k >= 0 {
			return i + 1, i + 1 + k
		}
		return i + 1, len(s)
	}
	if strings.HasPrefix(s[i:], `\"`) { // quoted inside a JSON string
		if k := strings.Index(s[i+2:], `\"`); k >= 0 {
			return i + 2, i + 2 + k
		}
		return i + 2, len(s)
	}
	end = i
	for end < len(s) && !strings.ContainsRune(" \t\r\n&;|\"'`)<>,}#", rune(s[end])) {
		// Inside a JSON string the value also ends at an escaped quote or
		// an escaped "&", "<" or ">" (\u0026: Go's encoder writes "&" so).
		if s[end] == '\\' && (strings.HasPrefix(s[end:], `\"`) || strings.HasPrefix(s[end:], `\u00`)) {
			break
		}
		end++
	}
	return i, end
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// --- token prefixes -------------------------------------------------------------

// tokenPatterns are the shapes of common tokens, each behind a literal that
// must be in the text for the pattern to be tried (the literal check is far
// cheaper than the regular expression).
var tokenPatterns = []struct {
	literals []string
	re       *regexp.Regexp
}{
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},   // GitHub classic tokens
	{[]string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{40,}`)},                          // GitHub fine-grained tokens
	{[]string{"glpat-"}, regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},                                   // GitLab personal access tokens
	{[]string{"xox"}, regexp.MustCompile(`\bxox[abeoprs]-[A-Za-z0-9-]{10,}`)},                                // Slack
	{[]string{"xapp-"}, regexp.MustCompile(`\bxapp-\d-[A-Za-z0-9-]{10,}`)},                                   // Slack app-level tokens
	{[]string{"sk-"}, regexp.MustCompile(`\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},          // OpenAI, Anthropic (see mixedKey)
	{[]string{"AKIA", "ASIA"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},                          // AWS access key ids
	{[]string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},                                        // Google API keys
	{[]string{"_live_", "_test_"}, regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}`)},         // Stripe secret and restricted keys
	{[]string{"npm_"}, regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36,}`)},                                         // npm
	{[]string{"pypi-"}, regexp.MustCompile(`\bpypi-[A-Za-z0-9_-]{50,}`)},                                     // PyPI
	{[]string{"hf_"}, regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)},                                           // Hugging Face
	{[]string{"SG."}, regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)},                    // SendGrid
	{[]string{"dop_v1_"}, regexp.MustCompile(`\bdop_v1_[a-f0-9]{64}`)},                                       // DigitalOcean
	{[]string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)}, // JWTs
}

func redactTokens(s string) string {
	for _, p := range tokenPatterns {
		if !containsAny(s, p.literals) {
			continue
		}
		s = p.re.ReplaceAllStringFunc(s, func(t string) string {
			if strings.HasPrefix(t, "sk-") && !mixedKey(t[len("sk-"):]) {
				return t // a branch or package name such as sk-learn-experiments
			}
			return Placeholder
		})
	}
	return s
}

func containsAny(s string, literals []string) bool {
	for _, l := range literals {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// mixedKey tells a random key (digits and both cases) from hyphenated words.
func mixedKey(s string) bool {
	var digit, upper, lower bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		}
	}
	return digit && upper && lower
}

// --- names ----------------------------------------------------------------------

// SecretName reports whether a variable, flag, header, JSON field or query
// parameter name says its value is a credential: GITHUB_TOKEN, api_key,
// clientSecret, PGPASSWORD, X-Amz-Signature, --auth-token. Names that only
// mention one (TOKENIZERS_PARALLELISM, MAX_TOKENS, PASSWORD_FILE,
// SSH_AUTH_SOCK, GIT_ASKPASS) are not.
func SecretName(name string) bool {
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	lastWord := words[len(words)-1]
	if benignLast[lastWord] && len(words) > 1 {
		return false
	}
	for k, w := range words {
		switch {
		case w == "token" || strings.HasSuffix(w, "token") && !strings.HasSuffix(w, "tokenizer"),
			strings.Contains(w, "password"), strings.Contains(w, "passwd"), strings.Contains(w, "passphrase"),
			strings.Contains(w, "secret"), strings.HasSuffix(w, "apikey"),
			w == "credential" || w == "credentials",
			w == "sig" || w == "signature":
			return true
		case (w == "pwd" || w == "pass" || w == "auth" || w == "pat") && k == len(words)-1 && len(words) > 1:
			// DB_PWD, SMTP_PASS, NPM_AUTH, GITLAB_PAT — but not PWD, the working directory.
			return true
		case w == "key" && k > 0 && keyQualifier[words[k-1]]:
			return true
		}
	}
	return false
}

// keyQualifier are the words that make a "key" a credential: API_KEY,
// SECRET_ACCESS_KEY, PRIVATE_KEY; not SORT_KEY or PRIMARY_KEY.
var keyQualifier = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true, "encryption": true,
	"master": true, "client": true, "subscription": true, "account": true, "auth": true, "app": true,
	"service": true, "license": true, "session": true, "storage": true, "shared": true,
}

// benignLast are last words that make a secret-sounding name about something
// else: where a secret is kept or how it is handled, not the secret itself.
var benignLast = map[string]bool{
	"file": true, "path": true, "dir": true, "directory": true, "sock": true, "socket": true,
	"name": true, "id": true, "ids": true, "count": true, "limit": true, "len": true, "length": true,
	"size": true, "type": true, "env": true, "var": true, "hint": true, "prompt": true, "stdin": true,
	"url": true, "uri": true, "endpoint": true, "command": true, "cmd": true, "helper": true,
	"min": true, "max": true, "ttl": true, "timeout": true, "expiry": true, "expires": true,
	"enabled": true, "required": true, "policy": true, "provider": true, "store": true, "manager": true,
	"ref": true, "arn": true, "version": true, "header": true, "mode": true, "format": true,
	"budget": true, "usage": true, "tokens": true, "region": true, "host": true, "port": true,
	"user": true, "username": true, "algorithm": true, "method": true, "scope": true, "scopes": true,
}

// splitWords cuts a name into lower-case words at "_", "-", "." and
// camelCase boundaries: "X-Amz-Signature" → x amz signature,
// "clientSecret" → client secret, "AWS_SECRET_ACCESS_KEY" → aws secret access key.
func splitWords(name string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.':
			flush()
		case c >= 'A' && c <= 'Z':
			// A capital starts a word after a lower-case letter or digit
			// (clientSecret), or before one in a run of capitals (APIKey → API Key).
			if i > 0 && (isLower(name[i-1]) || isDigit(name[i-1]) ||
				isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1])) {
				flush()
			}
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	return words
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// --- helpers ----------------------------------------------------------------------

// isReference reports a value that names a secret rather than holding one:
// a shell or template variable, a command substitution.
func isReference(v string) bool {
	v = strings.TrimLeft(v, `"'`)
	return strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") && strings.HasSuffix(v, "%") ||
		strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">")
}

func unquote(v string) (inner, quote string) {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1], v[:1]
	}
	return v, ""
}

// replaceSubmatch is regexp.ReplaceAllStringFunc with the submatches at hand.
func replaceSubmatch(re *regexp.Regexp, s string, f func(m []string) string) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range idx {
		m := make([]string, len(loc)/2)
		for g := range m {
			if loc[2*g] >= 0 {
				m[g] = s[loc[2*g]:loc[2*g+1]]
			}
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(f(m))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

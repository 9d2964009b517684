// Package s3url reads and writes the object store locations of stage copies,
// s3://bucket/prefix with the store's endpoint, region and credential variables' prefix as
// the query. The operator writes them into the copy pods' arguments (internal/staging), the
// agent reads them (internal/objcopy); kept apart from the S3 client so that the operator
// does not link one.
package s3url

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Scheme starts an object store location: s3://bucket/prefix.
const Scheme = "s3://"

// IsURL says whether a --from or --to is an object store location.
func IsURL(s string) bool { return strings.HasPrefix(s, Scheme) }

// Location is a prefix in a bucket, with the server it is on.
type Location struct {
	Bucket string
	// Prefix has no leading or trailing slash; empty is the whole bucket.
	Prefix string
	// Endpoint is the server's URL (empty: AWS S3), Region the bucket's (empty: asked).
	Endpoint, Region string
	// EnvPrefix is put before the AWS_* variable names the credentials are read from, so one
	// copy pod can hold the credentials of several stores (the operator's envFrom prefixes).
	EnvPrefix string
}

// Query parameters of a location URL, which the operator sets per copy: the endpoint and
// region of the store and the prefix of its credentials' variables.
const (
	QueryEndpoint  = "endpoint"
	QueryRegion    = "region"
	QueryEnvPrefix = "env-prefix"
)

var (
	// bucketRe is the API's rule for the bucket (v1alpha1.S3Source.URL's pattern), S3's
	// bucket naming rules: 3 to 63 lowercase letters, digits, dots and hyphens.
	bucketRe = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	// envPrefixRe: the prefix is put before variable names (AWS_ACCESS_KEY_ID), so it is
	// made of what a variable name is made of.
	envPrefixRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ParseURL reads s3://bucket[/prefix][?endpoint=..&region=..&env-prefix=..]. It checks what
// the API checks of a spec's URL and endpoint (the agent gets its arguments from a pod, which
// anyone who may create pods can write) and more: no control characters anywhere, since they
// reach logs, messages and the S3 requests; no empty, "." or ".." prefix segments, which
// would map objects onto other files; known query parameters only, each once, so a typo is an
// error rather than a store silently ignored.
func ParseURL(s string) (Location, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Location{}, fmt.Errorf("%q is not an s3:// URL", s)
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return Location{}, fmt.Errorf("%q has a control character at byte %d", s, i)
	}
	rest, query, _ := strings.Cut(rest, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %w", s, err)
	}
	for k, v := range q {
		switch k {
		case QueryEndpoint, QueryRegion, QueryEnvPrefix:
		default:
			return Location{}, fmt.Errorf("%q: unknown parameter %q (known: %s, %s, %s)", s, k, QueryEndpoint, QueryRegion, QueryEnvPrefix)
		}
		if len(v) > 1 {
			return Location{}, fmt.Errorf("%q: parameter %q given %d times", s, k, len(v))
		}
		if strings.IndexFunc(v[0], unicode.IsControl) >= 0 {
			return Location{}, fmt.Errorf("%q: parameter %q has a control character", s, k)
		}
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	l := Location{Bucket: bucket, Prefix: strings.TrimSuffix(prefix, "/"),
		Endpoint: q.Get(QueryEndpoint), Region: q.Get(QueryRegion), EnvPrefix: q.Get(QueryEnvPrefix)}
	if bucket == "" {
		return l, fmt.Errorf("%q names no bucket", s)
	}
	if !bucketRe.MatchString(bucket) {
		return l, fmt.Errorf("%q: bucket %q is not an S3 bucket name (3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit)", s, bucket)
	}
	if l.Prefix != "" {
		for _, seg := range strings.Split(l.Prefix, "/") {
			switch seg {
			case "..":
				return l, fmt.Errorf("%q: the prefix must not contain '..'", s)
			case "", ".":
				return l, fmt.Errorf("%q: the prefix has an empty or '.' segment (\"//\" or \"/./\")", s)
			}
		}
		if strings.Contains(l.Prefix, "#") {
			return l, fmt.Errorf("%q: the prefix must not contain '#'", s)
		}
	}
	if l.Endpoint != "" {
		u, err := url.Parse(l.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return l, fmt.Errorf("%q: endpoint %q is not an http(s) URL of a server (http(s)://host[:port])", s, l.Endpoint)
		}
	}
	if strings.IndexFunc(l.Region, unicode.IsSpace) >= 0 {
		return l, fmt.Errorf("%q: region %q has white space", s, l.Region)
	}
	if l.EnvPrefix != "" && !envPrefixRe.MatchString(l.EnvPrefix) {
		return l, fmt.Errorf("%q: env-prefix %q is not the start of a variable name (letters, digits, '_')", s, l.EnvPrefix)
	}
	return l, nil
}

// URL is the location with its query: what ParseURL reads back to the same Location.
func (l Location) URL() string {
	q := url.Values{}
	if l.Endpoint != "" {
		q.Set(QueryEndpoint, l.Endpoint)
	}
	if l.Region != "" {
		q.Set(QueryRegion, l.Region)
	}
	if l.EnvPrefix != "" {
		q.Set(QueryEnvPrefix, l.EnvPrefix)
	}
	if len(q) == 0 {
		return l.String()
	}
	return l.String() + "?" + q.Encode()
}

// String is the location without its query: what messages name.
func (l Location) String() string {
	if l.Prefix == "" {
		return Scheme + l.Bucket
	}
	return Scheme + l.Bucket + "/" + l.Prefix
}

// Key is the object name of rel (slash-separated) below the prefix.
func (l Location) Key(rel string) string {
	if l.Prefix == "" {
		return rel
	}
	return l.Prefix + "/" + rel
}

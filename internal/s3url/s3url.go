// Package s3url reads and writes the object store locations of stage copies,
// s3://bucket/prefix with the store's endpoint, region and credential variables' prefix as
// the query. The operator writes them into the copy pods' arguments (internal/staging), the
// agent reads them (internal/objcopy); kept apart from the S3 client so that the operator
// does not link one.
package s3url

import (
	"fmt"
	"net/url"
	"strings"
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

// ParseURL reads s3://bucket[/prefix][?endpoint=..&region=..&env-prefix=..].
func ParseURL(s string) (Location, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Location{}, fmt.Errorf("%q is not an s3:// URL", s)
	}
	rest, query, _ := strings.Cut(rest, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %w", s, err)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	l := Location{Bucket: bucket, Prefix: strings.Trim(prefix, "/"),
		Endpoint: q.Get(QueryEndpoint), Region: q.Get(QueryRegion), EnvPrefix: q.Get(QueryEnvPrefix)}
	if bucket == "" {
		return l, fmt.Errorf("%q names no bucket", s)
	}
	for _, seg := range strings.Split(l.Prefix, "/") {
		if seg == ".." {
			return l, fmt.Errorf("%q: the prefix must not contain '..'", s)
		}
	}
	return l, nil
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

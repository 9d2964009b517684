package s3url

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzParseURL: the agent reads these URLs from its arguments, which whoever may create pods
// can write. No panic; what is accepted has a bucket by S3's rules, a prefix without empty,
// "." or ".." segments and no control characters, and reads back the same through URL() and,
// without its query, through String().
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"s3://bucket/run-7/out/?endpoint=http%3A%2F%2F10.0.0.1%3A9000&region=eu-1&env-prefix=S3_1_",
		"s3://bucket", "s3://results/run-7", "s3://e2e/a/b/c/", "s3://data/out?env-prefix=S3_0_",
		"s3://store/run-7?env-prefix=S3_0_&endpoint=http://127.0.0.1:9000",
		"s3://b/a/../c", "s3:///x", "s3://", "/data", "s3://bucket/a//b?region=a&region=b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseURL(s)
		if err != nil {
			return
		}
		if !bucketRe.MatchString(l.Bucket) {
			t.Fatalf("bucket %q accepted", l.Bucket)
		}
		if l.Prefix != "" {
			for _, seg := range strings.Split(l.Prefix, "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("prefix %q accepted", l.Prefix)
				}
			}
		}
		for _, v := range []string{l.Prefix, l.Endpoint, l.Region, l.EnvPrefix} {
			if strings.IndexFunc(v, unicode.IsControl) >= 0 {
				t.Fatalf("control character accepted in %q", v)
			}
		}
		again, err := ParseURL(l.URL())
		if err != nil || again != l {
			t.Fatalf("URL() %q reads back as %+v, %v; want %+v", l.URL(), again, err, l)
		}
		bare, err := ParseURL(l.String())
		if err != nil || bare.Bucket != l.Bucket || bare.Prefix != l.Prefix {
			t.Fatalf("String() %q reads back as %+v, %v", l.String(), bare, err)
		}
	})
}

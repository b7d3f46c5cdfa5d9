package fleet

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Origin is a bucket and prefix of an S3-compatible store (AWS S3, MinIO,
// Ceph RGW, versitygw), through minio-go.
type s3Origin struct {
	client         *minio.Client
	bucket, prefix string
}

func newS3Origin(bucket, prefix string, c S3Config) (*s3Origin, error) {
	host, secure := "s3.amazonaws.com", true
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		switch {
		case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
			host, secure = u.Host, u.Scheme == "https"
		case !strings.Contains(c.Endpoint, "/"):
			host = c.Endpoint
		default:
			return nil, fmt.Errorf("--endpoint %q: give a host, or http(s)://HOST[:PORT]", c.Endpoint)
		}
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{},
	})
	client, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: c.Region})
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint %s: %v", host, err)
	}
	return &s3Origin{client: client, bucket: bucket, prefix: prefix}, nil
}

func (o *s3Origin) String() string {
	if o.prefix == "" {
		return "s3://" + o.bucket
	}
	return "s3://" + o.bucket + "/" + o.prefix
}

func (o *s3Origin) key(name string) string {
	if o.prefix == "" {
		return name
	}
	return o.prefix + "/" + name
}

func (o *s3Origin) Open(ctx context.Context, name string, offset int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	if offset > 0 {
		if err := opts.SetRange(offset, 0); err != nil {
			return nil, err
		}
	}
	g, ctx := newStallGuard(ctx, o.String()+"/"+name)
	obj, err := o.client.GetObject(ctx, o.bucket, o.key(name), opts)
	if err != nil {
		return nil, g.failed(o.wrap(name, err))
	}
	// GetObject is lazy: Stat makes the request, so a missing object or a
	// refused credential shows here and not in the middle of a copy.
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, g.failed(o.wrap(name, err))
	}
	return g.opened(obj), nil
}

func (o *s3Origin) wrap(name string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchKey, minio.NoSuchBucket:
		return fmt.Errorf("%s/%s: %w (%v)", o, name, ErrNotFound, err)
	}
	return fmt.Errorf("%s/%s: %v", o, name, err)
}

func (o *s3Origin) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	_, err := o.client.PutObject(ctx, o.bucket, o.key(name), r, size, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("%s/%s: %v", o, name, err)
	}
	return nil
}

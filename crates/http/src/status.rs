//! The status codes the servers send, with their reason phrases.

/// A response status the servers send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// 200: the file follows.
    Ok,
    /// 304: the file is unchanged since the client's `If-Modified-Since`.
    NotModified,
    /// 400: the request is malformed (or its path leaves the root).
    BadRequest,
    /// 404: no such file.
    NotFound,
    /// 405: a method other than `GET` and `HEAD`.
    MethodNotAllowed,
    /// 413: the request's body is longer than the server accepts.
    PayloadTooLarge,
    /// 414: the request target is longer than the server accepts.
    UriTooLong,
    /// 431: the header section is longer than the server accepts.
    HeadersTooLarge,
    /// 500: the server failed to read a file it found.
    InternalError,
    /// 501: a transfer coding the server does not implement.
    NotImplemented,
    /// 503: the server has no room for another connection.
    Unavailable,
    /// 505: an HTTP version other than 1.0 and 1.1.
    VersionNotSupported,
}

impl Status {
    /// The three-digit code.
    pub const fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::PayloadTooLarge => 413,
            Status::UriTooLong => 414,
            Status::HeadersTooLarge => 431,
            Status::InternalError => 500,
            Status::NotImplemented => 501,
            Status::Unavailable => 503,
            Status::VersionNotSupported => 505,
        }
    }

    /// The reason phrase of the status line.
    pub const fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::NotModified => "Not Modified",
            Status::BadRequest => "Bad Request",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::PayloadTooLarge => "Payload Too Large",
            Status::UriTooLong => "URI Too Long",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::InternalError => "Internal Server Error",
            Status::NotImplemented => "Not Implemented",
            Status::Unavailable => "Service Unavailable",
            Status::VersionNotSupported => "HTTP Version Not Supported",
        }
    }

    /// Whether a response with this status may carry a body (304 never does).
    pub const fn has_body(self) -> bool {
        !matches!(self, Status::NotModified)
    }
}

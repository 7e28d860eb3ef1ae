//! Header, cookie and multipart inputs in the document (issue 32 item 1, the part the
//! foundation left): `HeaderFields<T>` and `CookieFields<T>` list each field of `T` as
//! a header or cookie parameter, and `MultipartFields<T>` describes the form's fields,
//! its files as binary strings. The same types read the request.
#![cfg(feature = "openapi")]

use kiln::multipart::{FileField, MultipartFields};
use kiln::openapi::JsonSchema;
use kiln::test::{TestClient, TestResponse};
use kiln::{App, CookieFields, HeaderFields, Route};
use serde::Deserialize;
use serde_json::{Value, json};

/// Uploads an avatar.
#[derive(Route)]
#[route(POST, "/avatars")]
struct PostAvatar;

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(rename_all = "kebab-case")]
struct Client {
    /// The tenant the request is for.
    x_tenant: String,
    /// A number the client chose, echoed in logs.
    x_request_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Prefs {
    /// Light or dark.
    theme: String,
    font_size: Option<u8>,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Avatar {
    /// Whose avatar.
    user: String,
    /// The image.
    image: FileField,
    /// A smaller one, if the client made it.
    thumbnail: Option<FileField>,
}

async fn post_avatar(
    _: PostAvatar,
    HeaderFields(client): HeaderFields<Client>,
    CookieFields(prefs): CookieFields<Prefs>,
    mut upload: MultipartFields<Avatar>,
) -> Result<String, kiln::Rejection> {
    let image = upload.form.take_file("image")?;
    let thumbnail = upload.fields.thumbnail.is_some();
    Ok(format!(
        "{} {:?} {} {:?} {} {} bytes {:?} thumbnail={thumbnail}",
        client.x_tenant,
        client.x_request_id,
        prefs.theme,
        prefs.font_size,
        upload.fields.user,
        image.len(),
        upload.fields.image.file_name(),
    ))
}

fn app() -> App<()> {
    App::new(|_| ()).api(post_avatar)
}

fn parameter<'d>(op: &'d Value, location: &str, name: &str) -> &'d Value {
    let params = op["parameters"].as_array().expect("parameters");
    params.iter().find(|p| p["in"] == location && p["name"] == name).unwrap_or_else(|| panic!("no {location} {name}"))
}

#[test]
fn header_fields_are_header_parameters() {
    let doc = app().openapi();
    let op = &doc.json()["paths"]["/avatars"]["post"];
    let tenant = parameter(op, "header", "x-tenant");
    assert_eq!(tenant["required"], true);
    assert_eq!(tenant["schema"]["type"], "string");
    assert_eq!(tenant["description"], "The tenant the request is for.");
    let id = parameter(op, "header", "x-request-id");
    assert_eq!(id["required"], false);
    assert_eq!(op["responses"]["400"]["description"].as_str().map(|d| d.contains("a header is missing")), Some(true));
}

#[test]
fn cookie_fields_are_cookie_parameters() {
    let doc = app().openapi();
    let op = &doc.json()["paths"]["/avatars"]["post"];
    let theme = parameter(op, "cookie", "theme");
    assert_eq!(theme["required"], true);
    assert_eq!(theme["description"], "Light or dark.");
    assert_eq!(parameter(op, "cookie", "font_size")["required"], false);
}

#[test]
fn multipart_fields_describe_the_forms_fields_and_files() {
    let doc = app().openapi();
    let json = doc.json();
    let body = &json["paths"]["/avatars"]["post"]["requestBody"];
    assert_eq!(body["required"], true);
    assert_eq!(body["content"]["multipart/form-data"]["schema"]["$ref"], "#/components/schemas/Avatar");
    let avatar = &json["components"]["schemas"]["Avatar"];
    assert_eq!(avatar["required"], json!(["user", "image"]));
    assert_eq!(avatar["properties"]["user"]["type"], "string");
    assert_eq!(avatar["properties"]["image"]["type"], "string");
    assert_eq!(avatar["properties"]["image"]["contentMediaType"], "application/octet-stream");
    assert_eq!(avatar["properties"]["image"]["description"], "The image.");
    assert!(doc.undescribed().is_empty(), "{:?}", doc.undescribed());
}

/// Sends the avatar form with these inputs, to a new app.
fn send(tenant: Option<&str>, cookie: &str, parts: &[(&str, Option<&str>, &[u8])]) -> TestResponse {
    let mut client = TestClient::new(app());
    let mut req = client.request("POST", &PostAvatar).header("cookie", cookie).header("x-request-id", "9");
    if let Some(tenant) = tenant {
        req = req.header("X-Tenant", tenant);
    }
    req.multipart(parts).send()
}

#[test]
fn the_described_inputs_read_the_request() {
    let user: (&str, Option<&str>, &[u8]) = ("user", None, b"ann");
    let image: (&str, Option<&str>, &[u8]) = ("image", Some("a.png"), &[7u8; 12]);
    let res = send(Some("acme"), "theme=dark", &[user, image]);
    assert_eq!(res.text(), "acme Some(9) dark None ann 12 bytes Some(\"a.png\") thumbnail=false");
    // A required header, cookie or file that is absent, or a text where a file belongs.
    let res = send(None, "theme=dark", &[user, image]);
    assert_eq!(res.status(), 400, "{}", res.text());
    let res = send(Some("acme"), "font_size=3", &[user, image]);
    assert_eq!(res.status(), 400, "{}", res.text());
    let res = send(Some("acme"), "theme=dark", &[user]);
    assert_eq!(res.status(), 422, "{}", res.text());
    let res = send(Some("acme"), "theme=dark", &[user, ("image", None, b"text")]);
    assert_eq!(res.status(), 422, "{}", res.text());
    assert!(res.text().contains("expected a file"), "{}", res.text());
}

/// Reads a header and a cookie by names chosen at run time.
#[derive(Route)]
#[route("/echo")]
struct Echo;

/// Takes a multipart form read field by field.
#[derive(Route)]
#[route(POST, "/upload")]
struct Upload;

async fn echo(_: Echo, headers: kiln::Headers, cookies: kiln::Cookies) -> kiln::Json<Vec<String>> {
    let values = [headers.get("x-anything"), cookies.get("anything")];
    kiln::Json(values.into_iter().flatten().map(str::to_owned).collect())
}

async fn upload(_: Upload, _form: kiln::multipart::Multipart) -> &'static str {
    "ok"
}

#[test]
fn plain_headers_cookies_and_multipart_are_described_as_unlisted() {
    let doc = App::new(|_| ()).api(echo).api(upload).openapi();
    let paths = &doc.json()["paths"];
    let get = &paths["/echo"]["get"];
    let description = get["description"].as_str().unwrap_or_default();
    assert!(description.contains("Request headers are read by name at run time"), "{get}");
    assert!(description.contains("Cookies are read by name at run time"), "{get}");
    assert!(get.get("parameters").is_none(), "nothing can be listed: {get}");
    let post = &paths["/upload"]["post"];
    assert!(post["description"].as_str().unwrap_or_default().contains("multipart form's fields"), "{post}");
    assert_eq!(post["requestBody"]["content"]["multipart/form-data"]["schema"], json!({ "type": "object" }));
    let listed: Vec<(&str, usize)> =
        doc.undescribed().iter().map(|u| (u.operation.as_str(), u.reasons.len())).collect();
    assert_eq!(listed, [("GET /echo", 2), ("POST /upload", 1)], "{:?}", doc.undescribed());
}

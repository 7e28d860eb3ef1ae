//! Validated inputs (`kiln::Valid`, feature `validate`): constraints declared once with
//! garde, enforced when `Json`, `Form` or `Query` extract, and visible in the API
//! document's schemas.
#![cfg(all(feature = "openapi", feature = "validate"))]

use kiln::openapi::JsonSchema;
use kiln::test::TestClient;
use kiln::{App, Form, Json, Query, Route, Valid};
use serde::Deserialize;
use serde_json::json;

/// Registers an account.
#[derive(Route)]
#[route(POST, "/accounts")]
struct Register;

#[derive(Route)]
#[route(POST, "/accounts/form")]
struct RegisterForm;

#[derive(Route)]
#[route("/accounts")]
struct Search;

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Account {
    #[garde(length(min = 3, max = 20))]
    name: String,
    #[garde(range(min = 13, max = 130))]
    age: u8,
    #[garde(email)]
    email: String,
    #[garde(dive)]
    address: Address,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Address {
    #[garde(pattern(r"^[0-9]{5}$"))]
    zip: String,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Name {
    #[garde(length(min = 3))]
    name: String,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Page {
    #[garde(range(max = 50))]
    per_page: u32,
}

async fn register(_: Register, Valid(Json(account)): Valid<Json<Account>>) -> String {
    format!("{} {} {} {}", account.name, account.age, account.email, account.address.zip)
}

async fn register_form(_: RegisterForm, Valid(Form(form)): Valid<Form<Name>>) -> String {
    form.name
}

async fn search(_: Search, Valid(Query(page)): Valid<Query<Page>>) -> String {
    page.per_page.to_string()
}

fn app() -> App<()> {
    App::new(|_| ()).api(register).api(register_form).api(search)
}

#[test]
fn a_validation_failure_lists_every_field() {
    let mut client = TestClient::new(app());
    let bad = json!({ "name": "al", "age": 9, "email": "nope", "address": { "zip": "12" } });
    let res = client.request("POST", &Register).json(&bad).send();
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.text(),
        "invalid input:\naddress.zip: does not match pattern /^[0-9]{5}$/\nage: lower than 13\nemail: not a valid email: value is missing `@`\nname: length is lower than 3\n"
    );
    let good = json!({ "name": "ada", "age": 36, "email": "ada@example.org", "address": { "zip": "12345" } });
    let res = client.request("POST", &Register).json(&good).send();
    assert_eq!(res.text(), "ada 36 ada@example.org 12345");
}

#[test]
fn a_form_and_a_query_are_validated_too() {
    let mut client = TestClient::new(app());
    let res = client.request("POST", &RegisterForm).form(&[("name", "al")]).send();
    assert_eq!((res.status().as_u16(), res.text()), (422, "invalid input:\nname: length is lower than 3\n".to_owned()));
    let res = client.get("/accounts?per_page=51");
    assert_eq!((res.status().as_u16(), res.text()), (422, "invalid input:\nper_page: greater than 50\n".to_owned()));
    assert_eq!(client.get("/accounts?per_page=50").text(), "50");
    // A body that does not parse is refused as before, not as invalid.
    let res = client.request("POST", &Register).header("content-type", "application/json").body("{").send();
    assert_eq!(res.status(), 400);
}

#[test]
fn the_constraints_are_in_the_document() {
    let doc = app().openapi().into_json();
    let account = &doc["components"]["schemas"]["Account"]["properties"];
    assert_eq!(account["name"], json!({ "type": "string", "minLength": 3, "maxLength": 20 }));
    assert_eq!(account["age"]["minimum"], 13);
    assert_eq!(account["age"]["maximum"], 130);
    assert_eq!(account["email"]["format"], "email");
    assert_eq!(doc["components"]["schemas"]["Address"]["properties"]["zip"]["pattern"], "^[0-9]{5}$");
    let post = &doc["paths"]["/accounts"]["post"];
    assert_eq!(
        post["responses"]["422"]["description"],
        "the JSON body has the wrong shape; the input breaks its constraints: every failing field is listed"
    );
    let get = &doc["paths"]["/accounts"]["get"];
    assert_eq!(get["parameters"][0]["name"], "per_page");
    assert_eq!(get["parameters"][0]["schema"]["maximum"], 50);
    assert_eq!(
        get["responses"]["422"]["description"],
        "the input breaks its constraints: every failing field is listed"
    );
}

#[derive(Route)]
#[route(POST, "/members")]
struct Join;

#[derive(Route)]
#[route("/members")]
struct Members;

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(rename_all = "camelCase")]
struct Member {
    #[garde(length(min = 3))]
    full_name: String,
    #[serde(rename = "e-mail")]
    #[garde(email)]
    email: String,
    #[garde(dive)]
    home_address: Address,
    #[garde(dive)]
    past_teams: Vec<Team>,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(rename_all = "kebab-case")]
struct Team {
    #[garde(length(min = 2))]
    team_name: String,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(rename_all = "camelCase")]
struct MemberPage {
    #[garde(range(max = 50))]
    per_page: u32,
}

async fn join(_: Join, Valid(Json(member)): Valid<Json<Member>>) -> String {
    member.full_name
}

async fn members(_: Members, Valid(Query(page)): Valid<Query<MemberPage>>) -> String {
    page.per_page.to_string()
}

#[test]
fn validation_error_paths_use_the_serde_names() {
    let app = App::new(|_| ()).api(join).api(members).problem_json("/members");
    let mut client = TestClient::new(app);
    let bad = json!({
        "fullName": "al",
        "e-mail": "nope",
        "homeAddress": { "zip": "12" },
        "pastTeams": [{ "team-name": "ok" }, { "team-name": "x" }],
    });
    let res = client.request("POST", &Join).json(&bad).send();
    assert_eq!(res.status(), 422);
    let problem: serde_json::Value = serde_json::from_str(&res.text()).unwrap();
    let fields: Vec<(&str, &str)> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["pointer"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("e-mail", "/e-mail"),
            ("fullName", "/fullName"),
            ("homeAddress.zip", "/homeAddress/zip"),
            ("pastTeams[1].team-name", "/pastTeams/1/team-name"),
        ]
    );
    // The names are the schema's too.
    let document = App::new(|_| ()).api(join).openapi();
    let member = &document.json()["components"]["schemas"]["Member"]["properties"];
    assert!(member.get("fullName").is_some() && member.get("e-mail").is_some(), "{member}");
    let res = client.get("/members?perPage=51");
    let problem: serde_json::Value = serde_json::from_str(&res.text()).unwrap();
    assert_eq!(problem["errors"][0]["pointer"], "/perPage");
}

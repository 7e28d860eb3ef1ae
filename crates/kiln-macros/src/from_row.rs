//! `#[derive(FromRow)]`: a struct read from a database row, each field from the
//! column of its name.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, LitStr};

/// What a field's `#[from_row(...)]` says.
#[derive(Default)]
struct FieldOptions {
    rename: Option<LitStr>,
    default: bool,
}

fn field_options(field: &syn::Field) -> syn::Result<FieldOptions> {
    let mut options = FieldOptions::default();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("from_row")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                options.rename = Some(meta.value()?.parse()?);
                Ok(())
            } else if meta.path.is_ident("default") {
                options.default = true;
                Ok(())
            } else {
                Err(meta.error("unknown `from_row` option: expected `rename = \"column\"` or `default`"))
            }
        })?;
    }
    Ok(options)
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(&input.ident, "`FromRow` can be derived for structs only"));
    };
    let body = match &data.fields {
        Fields::Named(fields) => {
            let reads = fields
                .named
                .iter()
                .map(|field| {
                    let ident = field.ident.as_ref().expect("a named field");
                    let options = field_options(field)?;
                    let column = options
                        .rename
                        .map_or_else(|| ident.to_string().trim_start_matches("r#").to_owned(), |lit| lit.value());
                    let ty = &field.ty;
                    Ok(if options.default {
                        quote! {
                            #ident: if row.contains(#column) {
                                row.get::<#ty>(#column)?
                            } else {
                                ::core::default::Default::default()
                            }
                        }
                    } else {
                        quote! { #ident: row.get::<#ty>(#column)? }
                    })
                })
                .collect::<syn::Result<Vec<_>>>()?;
            quote! { #name { #(#reads),* } }
        }
        Fields::Unnamed(fields) => {
            let reads = fields.unnamed.iter().enumerate().map(|(i, field)| {
                let ty = &field.ty;
                quote! { row.get_at::<#ty>(#i)? }
            });
            quote! { #name ( #(#reads),* ) }
        }
        Fields::Unit => quote! { #name },
    };
    Ok(quote! {
        impl #impl_generics ::kiln::db::FromRow for #name #ty_generics #where_clause {
            fn from_row(row: &::kiln::db::Row<'_>) -> ::core::result::Result<Self, ::kiln::db::Error> {
                ::core::result::Result::Ok(#body)
            }
        }
    })
}

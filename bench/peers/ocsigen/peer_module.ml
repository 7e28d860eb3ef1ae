(* The Eliom module ocsigenserver loads (<eliommodule module="peer.cmxs"/>). *)
let () = Peer_services.register ()

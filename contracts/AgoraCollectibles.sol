// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Base64} from "@openzeppelin/contracts/utils/Base64.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @title A demo ERC-721 collection
/// @notice Numbered collectibles (ids from 1) whose metadata lives entirely on chain: `tokenURI`
/// answers a `data:application/json;base64,` document with a name, a description and an SVG
/// image (itself a data: URI), so a wallet shows them with no server and no internet. Only the
/// owner mints. The name and symbol are chosen at deployment, so several collections can exist.
contract AgoraCollectibles is ERC721, Ownable {
    /// @notice The id the next mint gets.
    uint256 public nextTokenId = 1;

    constructor(string memory name_, string memory symbol_, address initialOwner)
        ERC721(name_, symbol_)
        Ownable(initialOwner)
    {}

    /// @notice Mints the next token to `to` and returns its id; the owner only.
    function mint(address to) external onlyOwner returns (uint256 tokenId) {
        tokenId = nextTokenId++;
        _safeMint(to, tokenId);
    }

    /// @notice How many tokens have been minted so far.
    function totalMinted() external view returns (uint256) {
        return nextTokenId - 1;
    }

    /// @notice The token's metadata as a JSON data: URI; reverts for a token that does not exist.
    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        string memory id = Strings.toString(tokenId);
        string memory json = string.concat(
            '{"name":"', name(), " #", id,
            '","description":"A demo collectible of the Agora platform.","image":"',
            _image(tokenId, id),
            '","attributes":[{"trait_type":"Hue","value":', Strings.toString(_hue(tokenId)), "}]}"
        );
        return string.concat("data:application/json;base64,", Base64.encode(bytes(json)));
    }

    /// @dev Each token's colour follows from the collection's address and the id.
    function _hue(uint256 tokenId) private view returns (uint256) {
        return uint256(keccak256(abi.encode(address(this), tokenId))) % 360;
    }

    function _image(uint256 tokenId, string memory id) private view returns (string memory) {
        string memory svg = string.concat(
            "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 120 120'>",
            "<rect width='120' height='120' rx='12' fill='hsl(", Strings.toString(_hue(tokenId)),
            ",65%,50%)'/><text x='60' y='70' font-family='sans-serif' font-size='28' ",
            "text-anchor='middle' fill='#fff'>#", id, "</text></svg>"
        );
        return string.concat("data:image/svg+xml;base64,", Base64.encode(bytes(svg)));
    }
}
